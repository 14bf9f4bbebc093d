#!/usr/bin/env bash
# Proves that a change (a restructure, a refactoring) changed no behaviour: runs every tool
# with every table, mode and output format on every real profile, with a BASE build and a NEW
# build, and compares stdout, stderr, the exit status and every file each command writes,
# byte for byte.
#
#   scripts/compare-outputs.sh [BASE_REV]
#
# BASE_REV (default 792fa72, the last commit before the restructure) is built with
# `cargo build --release` in a git worktree at target/compare/base-src, into
# target/compare/base-target (both kept between runs; not rebuilt while they hold BASE_REV's
# binaries). NEW is the working tree, built with `cargo build --release`.
#
# Environment:
#   NJX_BASE_BIN=DIR      use the njx-* binaries in DIR as BASE (no build)
#   NJX_NEW_BIN=DIR       use the njx-* binaries in DIR as NEW (no build)
#   NJX_DATA=DIR          the real profiles (default ../shared/data from the repo root); when
#                         missing, only the commands on examples/data are compared
#   NJX_COMPARE_ONLY=ERE  compare only the commands matching this extended regex
#   NJX_COMPARE_TIMEOUT=S seconds one command may run (default 300)
#   NJX_COMPARE_KEEP=1    keep every command's outputs (not only the differing ones), with
#                         commands.txt (N, TAB, command) beside them, to inspect what ran
#
# Output: `same  COMMAND` or `DIFF  COMMAND` and a capped unified diff of what differed, one
# per command, then `N commands compared, M differ`. Exit status 0 when all are the same,
# 1 when any differ, 2 when the builds or the set-up fail.
#
# How commands run: each side has its own scratch folder (mktemp) holding `run/`, the working
# folder of every command, with `data` (a symlink to the profiles), `examples` (a symlink to
# the repo's examples/) and `fx/` (fixtures made by this script: proc0 unzipped, truncated and
# corrupt copies, a combine archive). So both sides name their inputs by the same relative
# paths, and the messages naming them are identical. A command is a bash command line, run
# with `bash -o pipefail -c` under a clean environment (env -i: PATH, HOME, LC_ALL=C, TZ=UTC,
# TMPDIR) with the side's binaries first on PATH, stdin from /dev/null unless it redirects,
# and every folder holding an `nsys` left off PATH (the .nsys-rep and njx-capture commands
# test the error paths without nsys). Whatever a command leaves in `run/` (-o, --svg, --plot
# files, intermediate files of a pipeline) is moved aside and compared; so is the number of
# entries it leaves in TMPDIR (the tools must clean up after themselves).
#
# Non-determinism normalised, all of it njx-capture's temporary names (random by design):
# the archive name it picks without -o (njx-report-XXXXXXXX.zip), masked by the one command
# that uses it; the staging folder its --analysis pipelines see the archive in
# (/ABSOLUTE/.njx-capture-XXXXXX/NAME.zip), masked in every command's stdout and stderr
# (see run_side). Everything else gives byte-identical results on two runs of the same
# binaries (checked by pointing NJX_BASE_BIN and NJX_NEW_BIN at one build): the SQLite
# temporary folders (njx-PID-NANOS-SEQ) are never printed, the archives njx-capture writes
# carry fixed member times, and the SVGs hold no dates.
set -uo pipefail

# Folders named in the environment are relative to the caller's working folder.
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
[ -n "${NJX_BASE_BIN:-}" ] && NJX_BASE_BIN=$(abs "$NJX_BASE_BIN")
[ -n "${NJX_NEW_BIN:-}" ] && NJX_NEW_BIN=$(abs "$NJX_NEW_BIN")
[ -n "${NJX_DATA:-}" ] && NJX_DATA=$(abs "$NJX_DATA")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$root" || exit 2
base_rev=${1:-792fa72}
limit=${NJX_COMPARE_TIMEOUT:-300}
only=${NJX_COMPARE_ONLY:-}
keep=${NJX_COMPARE_KEEP:-}
tools=(njx-export njx-ranges njx-compile-summary njx-modules njx-collectives njx-flamefold njx-capture
  njx-combine njx-pgle njx-heap njx-kernels njx-thunks njx-timeline njx-report njx-diff)
diff_lines=40 # lines of diff shown per differing command
start_time=$SECONDS

die() { echo "compare-outputs: $*" >&2; exit 2; }

# --- the two builds -------------------------------------------------------------------------

has_bins() {
  local t
  for t in "${tools[@]}"; do [ -x "$1/$t" ] || return 1; done
}

build_base() {
  local src=target/compare/base-src tgt=target/compare/base-target want have=
  want=$(git rev-parse --verify --quiet "$base_rev^{commit}") || die "$base_rev: not a commit"
  if [ -e "$src/.git" ]; then
    have=$(git -C "$src" rev-parse --verify --quiet HEAD) ||
      die "$src exists but is not a git worktree; remove it"
  else
    [ -e "$src" ] && die "$src exists but is not a git worktree; remove it"
    git worktree prune
    mkdir -p target/compare
    git worktree add --quiet --detach "$src" "$want" >&2 || die "git worktree add $src failed"
    have=$want
  fi
  if [ "$have" != "$want" ]; then
    git -C "$src" checkout --quiet --force --detach "$want" >&2 || die "checkout of $base_rev in $src failed"
  fi
  # built-rev records which commit the binaries in base-target were built from.
  if [ "$(cat "$tgt/built-rev" 2>/dev/null)" = "$want" ] && has_bins "$tgt/release"; then
    echo "compare-outputs: BASE $base_rev ($want) already built in $tgt" >&2
  else
    echo "compare-outputs: building BASE $base_rev in $src" >&2
    rm -f "$tgt/built-rev"
    # base-src lies under the repo: were the repo a cargo workspace, cargo would take
    # base-src for a stray member and refuse to build it. An empty [workspace] table makes
    # it a root of its own (a local change only; the checkout above discards it).
    if grep -q '^\[workspace\]' Cargo.toml && ! grep -q '^\[workspace\]' "$src/Cargo.toml"; then
      printf '\n[workspace]\n' >>"$src/Cargo.toml"
    fi
    (cd "$src" && cargo build --release --target-dir "$root/$tgt") >&2 || die "BASE build failed"
    echo "$want" >"$tgt/built-rev"
  fi
  base_bin=$tgt/release
}

if [ -n "${NJX_BASE_BIN:-}" ]; then base_bin=$NJX_BASE_BIN; else build_base; fi
if [ -n "${NJX_NEW_BIN:-}" ]; then
  new_bin=$NJX_NEW_BIN
else
  echo "compare-outputs: building NEW (the working tree)" >&2
  cargo build --release >&2 || die "NEW build failed"
  new_bin=${CARGO_TARGET_DIR:-target}/release
fi
has_bins "$base_bin" || die "$base_bin: not every njx-* binary is there"
has_bins "$new_bin" || die "$new_bin: not every njx-* binary is there"
base_bin=$(cd "$base_bin" && pwd -P)
new_bin=$(cd "$new_bin" && pwd -P)
echo "compare-outputs: BASE $base_bin" >&2
echo "compare-outputs: NEW  $new_bin" >&2

# --- data ----------------------------------------------------------------------------------

data=${NJX_DATA:-../shared/data}
have_data=false
if [ -d "$data/pax_fsdp4_4proc" ] && [ -d "$data/nvfuser_nsys_sqlite" ]; then
  data=$(cd "$data" && pwd -P)
  have_data=true
else
  warning="WARNING: $data (the real profiles) not found: comparing ONLY the commands on examples/data, which is NOT a proof"
  printf '\n%s\n%s\n%s\n\n' "${warning//?/#}" "$warning" "${warning//?/#}" >&2
fi

# --- the matrix ----------------------------------------------------------------------------
# Paths as the commands see them from run/.

cmds=()
add() { cmds+=("$1"); }

EX=examples/data/compile_trace.csv.xz
PX=data/pax_fsdp4_4proc
P0=$PX/pax_fsdp4_4proc_proc0.zip
P1=$PX/pax_fsdp4_4proc_proc1.zip
P2=$PX/pax_fsdp4_4proc_proc2.zip
P3=$PX/pax_fsdp4_4proc_proc3.zip
ALL="$PX/*.zip" # the four archives; the glob is expanded by bash -c, sorted under LC_ALL=C
# --hlo takes one path per occurrence: the four archives as dump sources.
HLO_ALL="--hlo $PX/pax_fsdp4_4proc_proc0.zip --hlo $PX/pax_fsdp4_4proc_proc1.zip --hlo $PX/pax_fsdp4_4proc_proc2.zip --hlo $PX/pax_fsdp4_4proc_proc3.zip"
S1=data/nvfuser_nsys_sqlite/report1_nsys2025.1.1.sqlite
S2=data/nvfuser_nsys_sqlite/report2_nsys2024.6.2.sqlite
S3=data/testcuda_nsys2026_sqlite/report1_nsys2026.1.1.sqlite
REP=data/nvfuser_nsys_sqlite/report1.nsys-rep
X0=fx/pax_fsdp4_4proc_proc0 # proc0 unzipped
TABLES="ranges gpu-ranges modules thunks"

# --help, -h and --version of every tool
for t in "${tools[@]}"; do
  add "$t --help"
  add "$t -h"
  add "$t --version"
done

# njx-export on the example CSV (xz), decompressed, gzipped, on stdin, with -o; errors
for t in $TABLES; do add "njx-export --table $t $EX"; done
add "njx-export --format csv $EX"
add "njx-export --table ranges --format json $EX"
add "njx-export < $EX"
add "njx-export --format csv - < $EX"
add "cat $EX | njx-export"
add "njx-export fx/compile_trace.csv"
add "njx-export --format csv fx/compile_trace.csv.gz"
add "njx-export < fx/compile_trace.csv"
add "njx-export $EX fx/compile_trace.csv.gz"
add "njx-export -o ranges.jsonl $EX"
add "njx-export --format csv -o ranges.csv $EX && njx-export ranges.csv"
add "njx-export $EX | head -n 5"
add "njx-export fx/missing.csv"
add "njx-export fx/notaprofile.txt"
add "njx-export < fx/empty"
add "njx-export fx/empty"
add "njx-export fx/truncated.csv.xz"
add "njx-export fx/bad-number.csv"
add "njx-export fx/missing-column.csv"
add "njx-export fx"
add "njx-export --table nope $EX"
add "njx-export --format table $EX"
add "njx-export --bogus $EX"
add "njx-export -o nodir/out.jsonl $EX"

if $have_data; then
  # every table and format on each archive and on all four
  for t in $TABLES; do
    for f in json csv; do
      for in in $P0 $P1 $P2 $P3 "$ALL"; do add "njx-export --table $t --format $f $in"; done
    done
  done
  add "njx-export $P0"
  for t in modules thunks; do
    for f in json csv; do
      for in in $P0 "$ALL"; do add "njx-export --table $t --format $f --no-align $in"; done
    done
  done
  # SQLite exports: every table and format, --start-end, --hlo
  for s in $S1 $S2 $S3; do
    for t in $TABLES; do
      add "njx-export --table $t $s"
      add "njx-export --table $t --format csv $s"
    done
    add "njx-export --start-end $s"
    add "njx-export --start-end --table gpu-ranges $s"
    add "njx-export --table modules $s --hlo $P0"
    add "njx-export --table thunks $s --hlo $P0"
  done
  add "njx-export --table thunks --format csv $S1 --hlo $X0/dump"
  add "njx-export --table modules $S1 $HLO_ALL"
  add "njx-export --table thunks --no-align $S2 --hlo $P0"
  add "njx-export $S1 $S2"
  add "njx-export --table gpu-ranges --format csv $S1 $S2"
  add "njx-export --table modules $P0 $S1"
  # .nsys-rep without nsys: the error path
  for t in ranges gpu-ranges thunks; do add "njx-export --table $t $REP"; done
  add "njx-export < $REP"
  # an extracted archive, its tables on their own, archives on stdin, a combine archive
  for t in $TABLES; do add "njx-export --table $t $X0"; done
  add "njx-export --table thunks --format csv $X0 $P1"
  add "njx-export --table gpu-ranges $X0/nvtx_gpu_proj_trace/trace.parquet"
  add "njx-export $X0/report_nvtx_pushpop_trace.csv.xz"
  add "njx-export < $P0"
  add "njx-export --table thunks < $P0"
  add "njx-export fx/combined.zip"
  add "njx-export --format csv fx/combined.zip"
  add "njx-export --table gpu-ranges fx/combined.zip"
  # -o, a reader closing the pipe early, errors
  add "njx-export -o ranges.jsonl $P0"
  add "njx-export --table thunks --format csv -o thunks.csv $ALL"
  add "njx-export --table modules -o modules.jsonl $ALL"
  add "njx-export --table thunks $ALL | head -n 3"
  add "njx-export fx/truncated.zip"
  add "njx-export --table thunks fx/truncated.zip"
  add "njx-export fx/truncated-head.zip"
  add "njx-export < fx/truncated.zip"
  add "njx-export $P0 fx/missing.zip"
  add "njx-export --table modules $S1 --hlo fx/missing-dump"
fi

# njx-ranges: each filter and format, on the example and on proc0, from files and pipes
range_opts=(
  ""
  "--xla-compile"
  "--splice-workers"
  "--subtree '^TSL:XlaCompile:'"
  "--select 'XlaCompile|XlaPassPipeline'"
  "--select '^TSL:XlaModule' --select '^TSL:Thunk'"
  "--fold '^NCCL:'"
  "--collapse XlaAutotuner"
  "--subtree '^TSL:XlaCompile' --fold '^NCCL:' --collapse XlaPassPipeline"
  "--format csv"
  "--xla-compile --format csv"
  "--splice-workers --subtree '^TSL:XlaCompile:' --select XlaCompileBackend"
)
range_inputs=("$EX")
$have_data && range_inputs+=("$P0")
for in in "${range_inputs[@]}"; do
  for o in "${range_opts[@]}"; do add "njx-ranges $o${o:+ }$in"; done
done
add "njx-export $EX | njx-ranges --xla-compile"
add "njx-export --format csv $EX | njx-ranges --subtree '^TSL:XlaCompile'"
add "njx-ranges < $EX"
add "njx-ranges -o ranges.jsonl --xla-compile $EX"
add "njx-export $EX | njx-ranges --xla-compile | njx-ranges --collapse '^TSL:XlaPass'"
add "njx-ranges --select '(' $EX"
add "njx-ranges --format table $EX"
add "njx-ranges fx/notaprofile.txt"
add "njx-ranges < fx/empty"
add "njx-export $EX | head -n 20 | sed '5s/\"dur_ns\":[0-9]*/\"dur_ns\":\"x\"/' | njx-ranges"
add "njx-export $EX | tac | njx-ranges"
if $have_data; then
  add "njx-export $ALL | njx-ranges --xla-compile"
  add "njx-export $P0 | njx-ranges --fold '^NCCL:' --format csv"
  add "njx-export --format csv $P0 | njx-ranges --subtree '^TSL:XlaModule'"
  add "njx-ranges --xla-compile $ALL"
  add "njx-ranges --format csv $S1"
  add "njx-export --start-end $S2 | njx-ranges --collapse '^ExpressionEvaluator'"
  add "njx-ranges --xla-compile fx/combined.zip"
fi

# njx-compile-summary: every grouping and format, from files, archives and pipelines
cs_opts=(
  ""
  "--total"
  "--by category"
  "--by name"
  "--total --by category"
  "--total --by name"
  "--passes"
  "--total --passes"
  "--total --by category --passes"
  "--format json"
  "--format csv"
  "--format table"
  "--total --format json"
  "--total --format csv"
  "--top 5"
  "--threshold 90"
  "--total --top 10 --threshold 80"
)
cs_inputs=("njx-compile-summary @ $EX" "njx-export $EX | njx-compile-summary @")
$have_data && cs_inputs+=(
  "njx-compile-summary @ $P0"
  "njx-compile-summary @ $ALL"
  "njx-export $ALL | njx-ranges --xla-compile | njx-compile-summary @"
)
# (@ in an input marks where the options go)
for in in "${cs_inputs[@]}"; do
  for o in "${cs_opts[@]}"; do
    if [ -n "$o" ]; then c=${in/@/$o}; else c=${in/ @ / }; c=${c% @}; fi
    add "$c"
  done
done
add "njx-export --format csv $EX | njx-compile-summary --total"
add "njx-compile-summary -o summary.txt --total $EX"
add "njx-compile-summary --by bogus $EX"
add "njx-compile-summary --top x $EX"
add "njx-compile-summary fx/notaprofile.txt"
if $have_data; then
  add "njx-compile-summary --total fx/combined.zip"
  add "njx-compile-summary $X0"
  add "njx-compile-summary $S1"
  add "njx-export $P0 | njx-ranges --xla-compile --format csv | njx-compile-summary --total --by category"
fi

# njx-modules: archives, records (JSON, CSV, file), SQLite exports, options, formats
if $have_data; then
  for in in $P0 $P1 $P2 $P3; do
    add "njx-modules $in"
    add "njx-modules --format json $in"
  done
  for o in "" "--include-warmup" "--include-autotuning" "--include-warmup --include-autotuning"; do
    for f in "" "--format json" "--format csv"; do
      add "njx-modules $o${o:+ }$f${f:+ }$ALL"
    done
  done
  add "njx-modules --format table $ALL"
  for o in "" "--include-warmup" "--include-autotuning" "--include-warmup --include-autotuning"; do
    add "njx-export --table modules $ALL | njx-modules${o:+ }$o"
  done
  add "njx-export --table modules $ALL | njx-modules --format csv"
  add "njx-export --table modules --format csv $ALL | njx-modules"
  add "njx-export --table modules --format csv $ALL | njx-modules --include-warmup --format json"
  add "njx-export --table modules -o modules.jsonl $ALL && njx-modules modules.jsonl"
  add "njx-modules -o modules.txt $ALL"
  add "njx-modules $X0"
  add "njx-modules $S1"
  add "njx-modules --format json $S2"
  add "njx-modules $S3"
  add "njx-export --table modules $S1 --hlo $P0 | njx-modules --include-autotuning"
  add "njx-export --table thunks $P0 | njx-modules"
  add "njx-modules fx/truncated.zip"
fi
add "njx-export $EX | njx-modules"
add "njx-modules fx/notaprofile.txt"
add "njx-modules < fx/empty"

# njx-collectives: reports and records in every format, the plot
if $have_data; then
  for in in "$ALL" $P0; do
    for o in "" "--include-warmup" "--records" "--records --include-warmup"; do
      for f in "" "--format json" "--format csv"; do
        add "njx-collectives $o${o:+ }$f${f:+ }$in"
      done
    done
  done
  add "njx-collectives --format table $ALL"
  for o in "" "--include-warmup" "--records" "--records --include-warmup"; do
    add "njx-export --table thunks $ALL | njx-collectives${o:+ }$o"
  done
  add "njx-export --table thunks $ALL | njx-collectives --format csv"
  add "njx-export --table thunks --format csv $ALL | njx-collectives"
  add "njx-export --table thunks --format csv $ALL | njx-collectives --records --format csv"
  add "njx-export --table thunks --no-align $ALL | njx-collectives"
  add "njx-collectives --plot busbw.svg $ALL"
  add "njx-collectives --plot busbw.svg --include-warmup -o report.txt $ALL"
  add "njx-collectives --plot plot $P0"
  add "njx-export --table thunks $ALL | njx-collectives --records --plot busbw.svg"
  add "njx-collectives -o coll.csv --records --format csv $ALL"
  add "njx-collectives --plot nodir/busbw.svg $ALL"
  add "njx-collectives --records --format table $ALL"
  add "njx-collectives $X0"
  add "njx-collectives $S1"
  add "njx-export --table modules $ALL | njx-collectives"
fi
add "njx-collectives fx/notaprofile.txt"
add "njx-collectives < fx/empty"

# njx-report and njx-diff: every real profile's report as text, JSON and a page, a program
# filter, the map/reduce path, two runs compared; njx, the list of the tools
if $have_data; then
  for in in "$ALL" $P0 $S1 $S3; do
    for f in "" "--format json"; do
      add "njx-report $f${f:+ }$in"
    done
  done
  add "njx-report --html page.html $ALL"
  add "njx-report --program pjit__wrapped_step_fn --format json $ALL"
  add "njx-report --exclude-program jit__psum $ALL"
  add "njx-report --partial -o p0.partial $P0 && njx-report --partial -o p1.partial $P1 && njx-report p0.partial p1.partial"
  add "njx-diff $P0 --vs $P1"
  add "njx-diff --by instruction --format json $P0 --vs $P1"
  add "njx-diff --by collective $ALL --vs $ALL"
fi
add "njx-report < fx/empty"
add "njx"
add "njx report --version"
add "njx reprot"

# njx-flamefold: every --by, --unit, warm-up, --top-modules, SVG, --diff, errors
for u in ns us ms; do add "njx-flamefold --unit $u $EX"; done
add "njx-flamefold < $EX"
add "njx-export --format csv $EX | njx-flamefold"
add "njx-export $EX | njx-ranges --xla-compile | njx-flamefold --unit ms"
add "njx-flamefold $EX --svg compile.svg"
add "njx-flamefold --unit us $EX --svg compile.svg --title 'Compile time' --width 640 -o compile.folded"
add "njx-flamefold $EX -o a.folded && njx-export $EX | njx-ranges --xla-compile | njx-flamefold -o b.folded && njx-flamefold --diff a.folded b.folded"
add "njx-flamefold $EX -o a.folded && njx-export $EX | njx-ranges --xla-compile | njx-flamefold -o b.folded && njx-flamefold --diff a.folded b.folded --normalize --svg diff.svg"
add "njx-flamefold --by source $EX"
add "njx-flamefold --by nope $EX"
add "njx-flamefold --unit s $EX"
add "njx-flamefold --normalize $EX"
add "njx-flamefold --diff a.folded"
add "njx-flamefold --diff fx/missing.folded fx/missing.folded"
add "njx-flamefold --diff fx/notaprofile.txt fx/notaprofile.txt"
add "njx-flamefold fx/notaprofile.txt"
if $have_data; then
  for by in stack source op-name opcode module device; do
    add "njx-flamefold --by $by $ALL"
    add "njx-flamefold --by $by $P0"
  done
  for by in source op-name opcode module device; do
    add "njx-export --table thunks $ALL | njx-flamefold --by $by $HLO_ALL"
  done
  mt="njx-export --table modules -o modules.jsonl $ALL && njx-export --table thunks -o thunks.jsonl $ALL"
  add "$mt && njx-flamefold --by source modules.jsonl thunks.jsonl $HLO_ALL"
  add "$mt && njx-flamefold --by device modules.jsonl thunks.jsonl"
  add "njx-export --table thunks --format csv $ALL | njx-flamefold --by op-name --hlo $X0/dump"
  add "njx-flamefold --by source --unit us $ALL"
  add "njx-flamefold --by module --unit ms $ALL"
  add "njx-flamefold --by source --include-warmup $ALL"
  add "njx-flamefold --by module --include-warmup $ALL"
  add "njx-flamefold --by device --include-warmup $P0"
  add "njx-flamefold --by module --top-modules 0.5 $ALL"
  add "njx-flamefold --by opcode --top-modules 1 $ALL"
  add "njx-flamefold --by op-name $X0"
  add "njx-flamefold $P0"
  add "njx-flamefold --unit ms $S1"
  add "njx-export $P0 | njx-ranges --xla-compile | njx-flamefold --unit ms"
  add "njx-flamefold --by source $ALL --svg source.svg --title 'GPU time by source' --width 800"
  add "njx-flamefold --by op-name $P0 --svg op.svg -o op.folded"
  add "njx-flamefold --unit ms $P0 --svg stack.svg --title Compile"
  d="njx-flamefold --by op-name $P0 -o before.folded && njx-flamefold --by op-name $P1 -o after.folded"
  add "$d && njx-flamefold --diff before.folded after.folded"
  add "$d && njx-flamefold --diff before.folded after.folded --normalize"
  add "$d && njx-flamefold --diff before.folded after.folded --svg diff.svg --title Diff --width 900"
  add "$d && njx-flamefold --diff before.folded after.folded --normalize -o diff.txt"
  add "njx-export --table thunks $P0 | njx-flamefold --by source"
  add "njx-flamefold --by source --top-modules 1.5 $P0"
  add "njx-flamefold --by source --top-modules 0 $P0"
  add "njx-flamefold --by source --top-modules abc $P0"
  add "njx-flamefold --by module fx/truncated.zip"
fi

# njx-capture: what needs no nsys
add "njx-capture"
add "njx-capture -o out --"
add "njx-capture -o out -- true"
add "njx-capture -o out true"
add "njx-capture --condition '1 == 0' -- sh -c 'echo ran; exit 3'"
add "njx-capture --nsys-jax-condition '1 == 0' -o out sh -c 'echo ran'"
add "njx-capture --condition '1 == 1' -o out -- true"
add "njx-capture --condition '1 == 0' -- ./no-such-program"
add "njx-capture -o 'out/rank%q{NJX_COMPARE_UNSET}' -- true"
add "njx-capture -o run%n -- true"
add "touch exists.zip && njx-capture -o exists -- true"
add "njx-capture --duration=5 python3 train.py"
add "njx-capture -f --analysis 'njx-export \"\$1\"' -o out -- true"

if $have_data; then
  # njx-capture with the stand-in nsys and program of fx/ (see setup_side): archives
  # written, compared byte for byte (their members carry no timestamps), analyses, exit
  # statuses, -o expansion, overwrite rules.
  C='PATH=$PWD/fx/bin:$PATH'
  add "$C njx-capture -o out/rank0 -- fx/jaxprog a b"
  add "$C njx-capture -o run1 fx/jaxprog && njx-export run1.zip | head -n 3 && njx-export --table gpu-ranges run1.zip | head -n 3"
  add "$C njx-capture -o run1.nsys-rep --duration=5 -- fx/jaxprog --steps 10"
  add "$C njx-capture -o run1 --analysis 'njx-export \"\$1\" | njx-compile-summary --total' --analysis 'njx-flamefold \"\$NJX_ARCHIVE\" --svg stack.svg --title Stack' -- fx/jaxprog"
  add "$C njx-capture -o run1 --analysis 'njx-flamefold --by op-name \"\$1\" --svg op.svg' -- fx/jaxprog"
  add "$C njx-capture -o run1 --analysis 'false' -- fx/jaxprog"
  add "$C PROGRAM_STATUS=3 njx-capture -o run1 -- fx/jaxprog"
  add "$C NJX_STANDIN_NO_REPORT=1 njx-capture -o run1 -- fx/jaxprog"
  add "$C njx-capture --condition '1 == 1' -o run1 -- fx/jaxprog"
  add "$C njx-capture --condition '1 == 0' -o run1 -- fx/jaxprog"
  add "touch exists.zip && $C njx-capture -o exists -- fx/jaxprog"
  add "touch exists.zip && $C njx-capture -f -o exists -- fx/jaxprog"
  add "$C NJX_RANK=3 njx-capture -o 'out/rank%q{NJX_RANK}%%' -- fx/jaxprog"
  add "$C njx-capture -o 'out/rank%q{NJX_COMPARE_UNSET}' -- fx/jaxprog"
  add "$C njx-capture -o run%n -- fx/jaxprog"
  add "$C njx-capture -o run1 -- ./no-such-program"
  # Without -o the archive gets a random name (njx-report-XXXXXXXX.zip, by design): this
  # command renames it and masks the name in the messages (see "Non-determinism" above).
  add "$C njx-capture -- fx/jaxprog 2>&1 | sed -E 's/njx-report-[A-Za-z0-9]{8}/njx-report-XXXXXXXX/g' && mv njx-report-*.zip njx-report.zip"
fi

# The six tools added after the restructure (issue 28: their outputs before and after).
if $have_data; then
  # njx-combine: the archive byte for byte, read back; --keep-nsys-rep; refusals
  add "njx-combine -o comb $P0 $P1"
  add "njx-combine -o comb $ALL && njx-modules comb.zip && njx-collectives comb.zip"
  add "njx-combine -o comb --keep-nsys-rep first $P0 $P1"
  add "njx-combine -o comb $P0"
  add "njx-combine -o comb $P0 $P0"
  add "njx-combine -o comb $P0 fx/truncated.zip"
  # njx-pgle: the profiles written, partials reduced
  add "njx-pgle -o pgle $ALL"
  add "njx-pgle -o pgle --include-warmup --format json $P0"
  add "njx-pgle --partial $P0 > p0.part && njx-pgle --partial $P1 > p1.part && njx-pgle -o pgle p0.part p1.part"
  add "njx-pgle -o pgle $S1"
  # njx-heap: every view and format, a program, the chart
  for v in peak buffers by-op-name by-source; do
    for f in table json csv; do add "njx-heap --view $v --format $f $ALL"; done
  done
  add "njx-heap --view buffers --program jit_train_step $P0"
  add "njx-heap --svg heap.svg $P0"
  add "njx-heap fx/truncated.zip"
  # njx-kernels: kernels and memops of the SQLite exports, by every grouping
  for s in $S1 $S2 $S3; do
    add "njx-kernels $s"
    add "njx-kernels --table memops --format csv $s"
  done
  for b in name short-name range module thunk; do add "njx-kernels --by $b $S3"; done
  add "njx-export --table kernels $S1 | njx-kernels --format json"
  add "njx-kernels $P0"
  # njx-thunks: every view and format, warm-up, partials reduced, records with --hlo
  for v in top opcode variability; do
    for f in table json csv; do add "njx-thunks --view $v --format $f $ALL"; done
    add "njx-thunks --view $v --include-warmup --top 5 --min-cv 0.1 $ALL"
  done
  add "njx-thunks --partial $P0 > t0.part && njx-thunks --partial $P1 > t1.part && njx-thunks --view variability t0.part t1.part"
  add "njx-export --table modules $P2 > m.jsonl && njx-export --table thunks $P2 > t.jsonl && njx-thunks --view opcode m.jsonl t.jsonl --hlo $P2"
  add "njx-thunks --view opcode $S1"
  # njx-timeline: archives, steady state, no ranges, an SQLite export, -o
  add "njx-timeline -o timeline.json $ALL"
  add "njx-timeline --steady --no-ranges $P0"
  add "njx-timeline --no-executions --no-align $P1"
  add "njx-timeline $S1"
fi

if [ -n "$only" ]; then
  kept=()
  for c in "${cmds[@]}"; do [[ $c =~ $only ]] && kept+=("$c"); done
  cmds=("${kept[@]}")
fi

# --- the scratch folders -------------------------------------------------------------------

work=$(mktemp -d -t njx-compare.XXXXXX) && work=$(cd "$work" && pwd -P) || die "mktemp failed"
differ=0
cleanup() {
  rm -rf "$work/base/run" "$work/new/run" "$work/base/tmp" "$work/new/tmp"
  if [ -n "$keep" ]; then
    echo "compare-outputs: the outputs are in $work/{base,new}/out/N, N as in $work/commands.txt" >&2
  elif [ "$differ" -gt 0 ]; then
    echo "compare-outputs: outputs of the differing commands are in $work/{base,new}/out/N" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Path for the commands: the folders of this PATH, without those holding an nsys.
clean_path=
IFS=: read -ra path_dirs <<<"$PATH"
for d in "${path_dirs[@]}"; do
  [ -n "$d" ] && [ "${d:0:1}" = / ] && [ ! -x "$d/nsys" ] && clean_path+=${clean_path:+:}$d
done

setup_side() { # side: makes run/ with data, examples and the fixtures
  local run=$work/$1/run
  mkdir -p "$run/fx" "$work/$1/tmp" "$work/$1/out" || return 1
  ln -s "$root/examples" "$run/examples"
  $have_data && ln -s "$data" "$run/data"
  (
    cd "$run/fx" || exit 1
    xz -dc "../$EX" >compile_trace.csv &&
      gzip -nc compile_trace.csv >compile_trace.csv.gz &&
      head -c "$(($(stat -c %s "../$EX") / 2))" "../$EX" >truncated.csv.xz &&
      head -n 30 compile_trace.csv | sed '10s/^\([0-9]*\),/\1x,/' >bad-number.csv &&
      head -n 30 compile_trace.csv | sed '1s/,TID,/,Thread,/' >missing-column.csv &&
      printf 'this is not a profile\njust text\n' >notaprofile.txt &&
      : >empty || exit 1
    if $have_data; then
      unzip -q "../$P0" -d pax_fsdp4_4proc_proc0 &&
        head -c "$(($(stat -c %s "../$P0") / 2))" "../$P0" >truncated.zip &&
        head -c 4096 "../$P0" >truncated-head.zip &&
        mkdir -p combine/report_nvtx_pushpop_trace.csv.xz &&
        unzip -p "../$P0" report_nvtx_pushpop_trace.csv.xz >combine/report_nvtx_pushpop_trace.csv.xz/proc0 &&
        unzip -p "../$P1" report_nvtx_pushpop_trace.csv.xz >combine/report_nvtx_pushpop_trace.csv.xz/proc1 &&
        (cd combine && zip -qX ../combined.zip report_nvtx_pushpop_trace.csv.xz/proc0 \
          report_nvtx_pushpop_trace.csv.xz/proc1) &&
        rm -rf combine || exit 1
      # Stand-ins for njx-capture, as tests/njx-capture.rs has them: an nsys whose
      # `profile` runs the program and writes a report (none with NJX_STANDIN_NO_REPORT)
      # and whose `export` copies an nvfuser export; a program writing two of proc0's HLO
      # dumps where XLA_FLAGS says and exiting with $PROGRAM_STATUS.
      mkdir -p bin capture &&
        ln -s "../../$S2" capture/report.sqlite &&
        unzip -q "../$P0" 'dump/module_0038.*hlo.pb.xz' 'dump/module_0028.*hlo.pb.xz' -d capture &&
        cat >bin/nsys <<'STANDIN' &&
#!/bin/sh
# A stand-in for nsys (njx-capture's error and success paths without Nsight Systems).
fx=$(cd "$(dirname "$0")/.." && pwd)
cmd="$1"; shift
case "$cmd" in
profile)
  while [ $# -gt 0 ]; do
    if [ "$1" = --output ]; then out="$2"; shift 2; break; fi
    shift
  done
  "$@"
  status=$?
  [ -n "$NJX_STANDIN_NO_REPORT" ] || printf 'stand-in report' >"$out.nsys-rep"
  exit $status;;
export)
  while [ $# -gt 1 ]; do
    if [ "$1" = --output ]; then out="$2"; fi
    shift
  done
  cp "$fx/capture/report.sqlite" "$out";;
*) echo "stand-in nsys: $cmd: not supported" >&2; exit 1;;
esac
STANDIN
        cat >jaxprog <<'STANDIN' &&
#!/bin/sh
# A stand-in for a JAX program: writes HLO dumps where XLA_FLAGS says, exits as told.
fx=$(cd "$(dirname "$0")" && pwd)
for flag in $XLA_FLAGS; do
  case "$flag" in --xla_dump_to=*) dump="${flag#--xla_dump_to=}";; esac
done
if [ -n "$dump" ]; then
  mkdir -p "$dump"
  for f in "$fx"/capture/dump/*.xz; do
    b=${f##*/}
    xz -dc "$f" >"$dump/${b%.xz}"
  done
fi
echo "jaxprog ran: $*"
exit "${PROGRAM_STATUS:-0}"
STANDIN
        chmod +x bin/nsys jaxprog || exit 1
    fi
  )
}
setup_side base || die "setting up the BASE scratch folder failed"
setup_side new || die "setting up the NEW scratch folder failed"

run_side() { # side bin n command
  local run=$work/$1/run out=$work/$1/out/$3 tmp=$work/$1/tmp
  mkdir -p "$out/files"
  (cd "$run" && timeout -k 10 "$limit" env -i HOME="${HOME:-/}" PATH="$2:$clean_path" LC_ALL=C TZ=UTC \
    TMPDIR="$tmp" bash --noprofile --norc -o pipefail -c "$4" </dev/null >"$out/stdout" 2>"$out/stderr")
  echo "exit status $?" >"$out/rc"
  # njx-capture runs --analysis pipelines on the archive in a staging folder it creates
  # with a random name beside the destination (.njx-capture-XXXXXX/NAME.zip) and names it
  # by its absolute path, in the pipelines' messages (their "$1") and in its own warning
  # about a failing analysis: mask the scratch folder (different per side) and the random
  # part. (The other normalisation is in the one njx-capture command without -o.)
  if grep -qF -e "$run/" -e .njx-capture- "$out/stdout" "$out/stderr"; then
    sed -i -e "s|$run/|<scratch>/|g" -e 's/\.njx-capture-[A-Za-z0-9]\{6\}/.njx-capture-XXXXXX/g' \
      "$out/stdout" "$out/stderr"
  fi
  find "$tmp" -mindepth 1 -maxdepth 1 | wc -l | sed 's/^/entries left in TMPDIR: /' >"$out/tmpleft"
  find "$tmp" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
  find "$run" -mindepth 1 -maxdepth 1 ! -name data ! -name examples ! -name fx -exec mv -t "$out/files" {} +
}

text_diff() { # label base new
  if grep -qI . "$2" 2>/dev/null || [ ! -s "$2" ]; then
    if grep -qI . "$3" 2>/dev/null || [ ! -s "$3" ]; then
      diff -u --label "base/$1" --label "new/$1" "$2" "$3"
      return
    fi
  fi
  echo "binary $1 differs: $(stat -c %s "$2") bytes in base, $(stat -c %s "$3") in new"
}

compare() { # n: prints what differs, nothing when all is the same
  local b=$work/base/out/$1 n=$work/new/out/$1 f
  for f in rc stdout stderr tmpleft; do
    cmp -s "$b/$f" "$n/$f" || text_diff "$f" "$b/$f" "$n/$f"
  done
  # the files written (f) and folders (d), links (l)…
  diff -u --label "base/files written" --label "new/files written" \
    <(cd "$b/files" && find . -mindepth 1 -printf '%y %P\n' | sort) \
    <(cd "$n/files" && find . -mindepth 1 -printf '%y %P\n' | sort)
  # …and the content of those written on both sides
  while read -r f; do
    cmp -s "$b/files/$f" "$n/files/$f" || text_diff "$f" "$b/files/$f" "$n/files/$f"
  done < <(comm -12 <(cd "$b/files" && find . -type f -printf '%P\n' | sort) \
    <(cd "$n/files" && find . -type f -printf '%P\n' | sort))
}

# --- run -----------------------------------------------------------------------------------

i=0
for c in "${cmds[@]}"; do
  i=$((i + 1))
  run_side base "$base_bin" "$i" "$c"
  run_side new "$new_bin" "$i" "$c"
  d=$(compare "$i" | head -n $((diff_lines + 1)))
  [ -n "$keep" ] && printf '%s\t%s\n' "$i" "$c" >>"$work/commands.txt"
  if [ -z "$d" ]; then
    echo "same  $c"
    [ -n "$keep" ] || rm -rf "$work/base/out/$i" "$work/new/out/$i"
  else
    differ=$((differ + 1))
    echo "DIFF  $c"
    echo "$d" | head -n "$diff_lines" | sed 's/^/      /'
    [ "$(echo "$d" | wc -l)" -gt "$diff_lines" ] &&
      echo "      … (cut at $diff_lines lines; the outputs are kept, see the end)"
  fi
done

$have_data || printf '%s\n' "$warning" >&2
echo "compare-outputs: $((SECONDS - start_time)) s" >&2
echo "$i commands compared, $differ differ"
[ "$differ" -eq 0 ]

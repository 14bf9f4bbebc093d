#!/usr/bin/env bash
# How njx scales with the number of ranks (issue 13): wall time and peak memory of each
# multi-rank job on synthetic N-rank runs, against a floor of C tools reading the same
# members.
#
# Usage (from anywhere):  scripts/bench-scale.sh [N...]      (default: 16 64 256 1024)
#
# For each N, `examples/gen_ranks.rs` writes N archives (rank r a copy of pax archive
# r mod 4 from ../shared/data, its launcher thread renamed to global device r) to
# target/scale/N/, reused on later runs (delete the folder to regenerate). Each is about
# 2.8 MB: N is skipped, saying so, when the file system has too little space for it.
# The archives are read once before timing, so the page cache holds them.
#
# Jobs, run in target/scale/N/ with the release binaries:
#   compile      njx-export rank*.zip | njx-ranges --xla-compile | njx-compile-summary --total
#   modules      njx-modules rank*.zip
#   collectives  njx-collectives rank*.zip
#   fold-source  njx-flamefold --by source rank*.zip
#   fold-opname  njx-flamefold --by op-name rank*.zip
#   thunks       njx-export --table thunks rank*.zip > /dev/null
#   report       njx-report rank*.zip (every table above but the flame graphs, one reading)
#   diff-program       njx-diff rank*.zip --vs rank*.zip (N ranks a side; issue 31)
#   diff-instruction   njx-diff --by instruction rank*.zip --vs rank*.zip
#   report-reduce      njx-report @list over the N ranks' report partial results (issue 41)
#   report-tree        the same in two levels: groups of 32 partials reduced to one partial
#                      each (`njx-report --partial @group -o …`, every core), then those
#   thunks-reduce      njx-thunks @list over the N ranks' njx-thunks partial results
#   report-html        njx-report --html page.html rank*.zip (the wait and lateness pictures
#                      compare clocks across ranks, so they are drawn from archives only)
# The partial results (the map step: `njx-report --partial rank.zip -o rank.partial`, and
# njx-thunks') are made once per N and build (remade when `njx-report --version` changes),
# every core, into target/scale/N/partials/, untimed; their total size is printed.
# Floors, the same members decompressed by C tools, `xargs -P $(nproc)` over the ranks
# (njx also reads its inputs on every core):
#   csv   (for compile): unzip -p report_nvtx_pushpop_trace.csv.xz | xz -dc
#   gpu   (for the others): the push/pop CSV as above (they read it for the compiled
#         programs), unzip -p of nvtx_gpu_proj_trace/trace.parquet and
#         thread-metadata.parquet (stored in the zip; their snappy pages are not decoded),
#         unzip -p 'dump/*after_optimizations*' | xz -dc (the dumps njx decodes; the
#         before_optimizations ones it never opens)
#   gpu2  (for the diffs): gpu twice, both sides decompressed once each
#
# With NJX_SCALE_RENUMBER=1, no archives are made: the N ranks' partial results are made
# by scripts/renumber-partials.py from those of N=16 (made first where missing), each real
# rank's partial with its devices renumbered (so 10,000 ranks need 4 GB and minutes, not
# 28 GB of archives and an hour of map steps), into target/scale/N-renumbered/partials/;
# only the reduce jobs run, and there is no floor.
#
# Every command runs as `timeout T /usr/bin/time -f '%e %M' bash -o pipefail -c CMD`.
# Peak RSS is that of the largest process: Linux reports for a waited-for child the
# largest of its own peak and its waited-for descendants', so for a pipeline (or the
# floors' xargs) it is the max over its processes, not their sum. Output goes to
# /dev/null; a failing command is reported as `error` with its stderr.
#
# Tables, one per job: N, wall s, peak RSS MiB, ms per rank (wall / N), per-rank cost
# relative to the smallest N measured (1.00 = linear scaling), and njx wall / floor wall.
#
# Environment:
#   NJX_SCALE_MAX=N        skip N above this (e.g. 256 to leave out 1024)
#   NJX_SCALE_TIMEOUT=S    per-command limit, default 600; a job that passes it shows
#                          `>S` and is not run for larger N
#   NJX_SCALE_MEM_MIB=M    per-process address-space limit (ulimit -v), default half the
#                          physical memory; a job that runs out shows `>M` as its RSS (and
#                          the seconds until then as its wall) and is not run for larger N
#   NJX_SCALE_RUNS=K       run every command K times (default 1) and keep the fastest
#                          (the machine may be shared: the spread between runs is large)
#   NJX_SCALE_SOURCES="A.zip B.zip …"  source archives (default: the four pax archives)
#   NJX_SCALE_JOBS=REGEX   only the jobs whose name matches (e.g. '^report$')
#   NJX_SCALE_RENUMBER=1   partial results renumbered from N=16's, reduce jobs only (above)
#   CARGO_TARGET_DIR       honoured

set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=${CARGO_TARGET_DIR:-target}
TARGET=$(mkdir -p "$TARGET" && cd "$TARGET" && pwd)
BIN=$TARGET/release
SCALE=$TARGET/scale
TIMEOUT=${NJX_SCALE_TIMEOUT:-600}
MAX=${NJX_SCALE_MAX:-}
RUNS=${NJX_SCALE_RUNS:-1}
MEM_KIB=$(( ${NJX_SCALE_MEM_MIB:-$(awk '/^MemTotal:/ {print int($2 / 2048)}' /proc/meminfo)} * 1024 ))
SIZES=("$@")
[[ ${#SIZES[@]} -gt 0 ]] || SIZES=(16 64 256 1024)

if [[ -n ${NJX_SCALE_SOURCES:-} ]]; then
    read -r -a SOURCES <<< "$NJX_SCALE_SOURCES"
else
    SOURCES=()
    for i in 0 1 2 3; do SOURCES+=("../shared/data/pax_fsdp4_4proc/pax_fsdp4_4proc_proc$i.zip"); done
fi
for s in "${SOURCES[@]}"; do
    if [[ ! -f $s ]]; then
        echo "skipped: source archive $s not found" >&2
        exit 0
    fi
done
for tool in /usr/bin/time timeout unzip xz xargs; do
    command -v "$tool" > /dev/null || { echo "bench-scale: needs $tool" >&2; exit 1; }
done
for n in "${SIZES[@]}"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [N...] (N a positive whole number, not $n)" >&2; exit 2; }
done

echo "== building (release)" >&2
cargo build --release --quiet --bins --example gen_ranks

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Average source size in KiB, for the space check.
src_kib=$(( $(cat "${SOURCES[@]}" | wc -c) / ${#SOURCES[@]} / 1024 + 1 ))

# prepare N: target/scale/N/ with rank*.zip, generated unless complete already.
# Returns 1 (saying why) when there is no room.
prepare() {
    local n=$1 dir=$SCALE/$1
    if [[ -f $dir/.complete ]] && [[ $(cat "$dir/.complete") == "$n ${SOURCES[*]}" ]]; then
        echo "== N=$n: reusing $dir ($(du -sh "$dir" | cut -f1))" >&2
        return 0
    fi
    mkdir -p "$SCALE"
    rm -rf "$dir" "$dir.partial"
    local need=$(( n * src_kib )) avail
    avail=$(df -Pk "$SCALE" | awk 'NR == 2 {print $4}')
    if (( need + 1048576 > avail )); then
        echo "== N=$n: skipped: needs $(( need / 1024 )) MiB, $(( avail / 1024 )) MiB free on $SCALE (1 GiB kept spare)" >&2
        return 1
    fi
    echo "== N=$n: generating $dir (about $(( need / 1024 )) MiB)" >&2
    "$BIN/examples/gen_ranks" "$dir.partial" "$n" "${SOURCES[@]}"
    echo "$n ${SOURCES[*]}" > "$dir.partial/.complete"
    mv "$dir.partial" "$dir"
    echo "== N=$n: $(du -sh "$dir" | cut -f1) in $dir" >&2
}

# make_partials DIR: the map step over DIR's archives, into DIR/partials (every core).
make_partials() {
    local dir=$1
    echo "== $dir: making the partial results (map step)" >&2
    rm -rf "$dir/partials" && mkdir "$dir/partials"
    ( cd "$dir" && ls rank*.zip | xargs -P "$P" -I{} bash -c \
        "'$BIN/njx-report' -q --partial {} -o partials/{}.report && '$BIN/njx-thunks' -q --partial {} -o partials/{}.thunks" )
    "$BIN/njx-report" --version > "$dir/partials/.complete"
}

# prepare_renumbered N: target/scale/N-renumbered/partials, renumbered from N=16's
# partials (made first where missing or of another build), unless complete already.
prepare_renumbered() {
    local n=$1 dir=$SCALE/$1-renumbered version
    version=$("$BIN/njx-report" --version)
    if [[ $(cat "$dir/partials/.complete" 2> /dev/null) == "$version" ]]; then
        echo "== N=$n: reusing $dir ($(du -sh "$dir" | cut -f1))" >&2
        return 0
    fi
    prepare 16 || return 1
    [[ $(cat "$SCALE/16/partials/.complete" 2> /dev/null) == "$version" ]] || make_partials "$SCALE/16"
    local avail need=$(( n * 800 ))
    avail=$(df -Pk "$SCALE" | awk 'NR == 2 {print $4}')
    if (( need + 1048576 > avail )); then
        echo "== N=$n: skipped: needs $(( need / 1024 )) MiB, $(( avail / 1024 )) MiB free on $SCALE (1 GiB kept spare)" >&2
        return 1
    fi
    echo "== N=$n: renumbering N=16's partial results into $dir (about $(( need / 1024 )) MiB)" >&2
    rm -rf "$dir" && mkdir -p "$dir"
    python3 scripts/renumber-partials.py "$SCALE/16/partials" "$dir/partials" "$n"
    echo "$version" > "$dir/partials/.complete"
}

# measure DIR CMD: runs CMD in DIR under timeout, time and the memory limit; prints
# "WALL RSS_KIB", "timeout", "oom WALL" (wall time until it ran out) or "error".
measure() {
    local dir=$1 cmd=$2 rc=0
    ( cd "$dir" && ulimit -v "$MEM_KIB" && timeout "$TIMEOUT" /usr/bin/time -f '%e %M' \
        -o "$tmp/time" bash -o pipefail -c "$cmd" > /dev/null 2> "$tmp/stderr" ) || rc=$?
    if (( rc == 124 )); then
        echo timeout
    elif (( rc == 134 || rc == 137 )) || grep -q '^memory allocation of .* failed' "$tmp/stderr"; then
        echo "oom $(awk 'END {print $1}' "$tmp/time")"
    elif (( rc != 0 )); then
        echo "bench-scale: failed (exit $rc) in $dir: $cmd" >&2
        tail -5 "$tmp/stderr" >&2
        echo error
    else
        tail -1 "$tmp/time"
    fi
}

# best DIR CMD: measure, RUNS times, keeping the fastest; the first failure ends it.
best() {
    local out best="" i
    for (( i = 0; i < RUNS; i++ )); do
        out=$(measure "$1" "$2")
        if [[ $out != [0-9]*" "* ]]; then
            echo "$out"
            return
        fi
        if [[ -z $best ]] || awk -v a="${out%% *}" -v b="${best%% *}" 'BEGIN {exit !(a < b)}'; then
            best=$out
        fi
    done
    echo "$best"
}

# The floors: one bash per rank, all cores.
P=$(nproc)
FLOOR_CSV="ls rank*.zip | xargs -P $P -I{} bash -o pipefail -c 'unzip -p {} report_nvtx_pushpop_trace.csv.xz | xz -dc > /dev/null'"
FLOOR_GPU="ls rank*.zip | xargs -P $P -I{} bash -o pipefail -c \
'unzip -p {} report_nvtx_pushpop_trace.csv.xz | xz -dc > /dev/null && \
unzip -p {} nvtx_gpu_proj_trace/trace.parquet thread-metadata.parquet > /dev/null && \
unzip -p {} \"dump/*after_optimizations*\" | xz -dc > /dev/null'"

JOBS=(compile modules collectives fold-source fold-opname thunks report diff-program
    diff-instruction report-reduce report-tree thunks-reduce report-html)
RENUMBER=${NJX_SCALE_RENUMBER:-}
if [[ -n $RENUMBER ]]; then
    kept=()
    for job in "${JOBS[@]}"; do [[ $job == *-reduce || $job == report-tree ]] && kept+=("$job"); done
    JOBS=("${kept[@]}")
fi
if [[ -n ${NJX_SCALE_JOBS:-} ]]; then
    kept=()
    for job in "${JOBS[@]}"; do [[ $job =~ $NJX_SCALE_JOBS ]] && kept+=("$job"); done
    JOBS=("${kept[@]}")
fi
declare -A CMD=(
    [compile]="'$BIN/njx-export' rank*.zip | '$BIN/njx-ranges' --xla-compile | '$BIN/njx-compile-summary' --total"
    [modules]="'$BIN/njx-modules' rank*.zip"
    [collectives]="'$BIN/njx-collectives' rank*.zip"
    [fold-source]="'$BIN/njx-flamefold' --by source rank*.zip"
    [fold-opname]="'$BIN/njx-flamefold' --by op-name rank*.zip"
    [report]="'$BIN/njx-report' rank*.zip"
    [thunks]="'$BIN/njx-export' --table thunks rank*.zip > /dev/null"
    [diff-program]="'$BIN/njx-diff' rank*.zip --vs rank*.zip"
    [diff-instruction]="'$BIN/njx-diff' --by instruction rank*.zip --vs rank*.zip"
    [report-reduce]="ls partials/rank*.report > $tmp/list && '$BIN/njx-report' @$tmp/list"
    [report-tree]="rm -rf $tmp/tree && mkdir $tmp/tree && ls partials/rank*.report | split -l 32 - $tmp/tree/g. && ls $tmp/tree/g.* | xargs -P $P -I{} '$BIN/njx-report' --partial @{} -o {}.mid && '$BIN/njx-report' $tmp/tree/g.*.mid"
    [thunks-reduce]="ls partials/rank*.thunks > $tmp/list && '$BIN/njx-thunks' @$tmp/list"
    [report-html]="'$BIN/njx-report' -q --html $tmp/page.html rank*.zip"
)
declare -A FLOOR_OF=(
    [compile]=csv [modules]=gpu [collectives]=gpu [fold-source]=gpu [fold-opname]=gpu [thunks]=gpu [report]=gpu
    [diff-program]=gpu2 [diff-instruction]=gpu2 [report-reduce]=gpu [report-tree]=gpu
    [thunks-reduce]=gpu [report-html]=gpu
)
declare -A FLOOR_CMD=([csv]=$FLOOR_CSV [gpu]=$FLOOR_GPU [gpu2]="$FLOOR_GPU && $FLOOR_GPU")
declare -A RESULT=() FLOOR=() GAVE_UP=()
MEASURED=()

for n in "${SIZES[@]}"; do
    if [[ -n $MAX ]] && (( n > MAX )); then
        echo "== N=$n: skipped (NJX_SCALE_MAX=$MAX)" >&2
        continue
    fi
    if [[ -n $RENUMBER ]]; then
        prepare_renumbered "$n" || continue
        dir=$SCALE/$n-renumbered
    else
        prepare "$n" || continue
        dir=$SCALE/$n
        cat "$dir"/rank*.zip > /dev/null
    fi
    MEASURED+=("$n")
    if [[ -z $RENUMBER ]] && [[ " ${JOBS[*]} " =~ \ (report-reduce|report-tree|thunks-reduce)\  ]] &&
        [[ $(cat "$dir/partials/.complete" 2> /dev/null) != "$("$BIN/njx-report" --version)" ]]; then
        make_partials "$dir"
    fi
    if [[ -d $dir/partials ]]; then
        echo "   N=$n partials: report $(cat "$dir"/partials/*.report | wc -c) bytes, thunks $(cat "$dir"/partials/*.thunks | wc -c) bytes in all" >&2
    fi
    for f in csv gpu gpu2; do
        if [[ -n $RENUMBER ]]; then
            FLOOR[$f,$n]=-
            continue
        fi
        FLOOR[$f,$n]=$(best "$dir" "${FLOOR_CMD[$f]}")
        echo "   N=$n floor $f: ${FLOOR[$f,$n]}" >&2
    done
    for job in "${JOBS[@]}"; do
        if [[ -n ${GAVE_UP[$job]:-} ]]; then
            RESULT[$job,$n]=skipped
            continue
        fi
        RESULT[$job,$n]=$(best "$dir" "${CMD[$job]}")
        echo "   N=$n $job: ${RESULT[$job,$n]}" >&2
        [[ ${RESULT[$job,$n]} != timeout && ${RESULT[$job,$n]} != oom* ]] || GAVE_UP[$job]=1
    done
done

[[ ${#MEASURED[@]} -gt 0 ]] || { echo "bench-scale: nothing measured" >&2; exit 1; }

echo
echo "njx scaling: $(nproc) cores, fastest of $RUNS run(s), timeout ${TIMEOUT}s, memory limit $(( MEM_KIB / 1024 )) MiB; floor = C unzip + xz -dc of the members the job reads"
for job in "${JOBS[@]}"; do
    f=${FLOOR_OF[$job]}
    echo
    echo "$job: $(sed "s|'$BIN/\([^']*\)'|\1|g" <<< "${CMD[$job]}")"
    base=""
    printf '%6s %9s %9s %9s %9s %10s %10s %10s\n' N "wall s" "RSS MiB" "ms/rank" "x N=${MEASURED[0]}" "floor s" "floor MiB" "njx/floor"
    for n in "${MEASURED[@]}"; do
        r=${RESULT[$job,$n]:-skipped} fl=${FLOOR[$f,$n]}
        if [[ $fl == *" "* ]]; then
            read -r fw fm <<< "$fl"
            fm=$(awk -v k="$fm" 'BEGIN {printf "%.1f", k / 1024}')
        else
            fw=$fl fm=-
        fi
        if [[ $r == oom* ]]; then
            printf '%6s %9s %9s %9s %9s %10s %10s %10s\n' "$n" "${r#oom }" ">$(( MEM_KIB / 1024 ))" - - "$fw" "$fm" -
            continue
        fi
        if [[ $r != *" "* ]]; then
            [[ $r == timeout ]] && r=">${TIMEOUT}"
            printf '%6s %9s %9s %9s %9s %10s %10s %10s\n' "$n" "$r" - - - "$fw" "$fm" -
            continue
        fi
        read -r wall kib <<< "$r"
        per=$(awk -v w="$wall" -v n="$n" 'BEGIN {printf "%.2f", 1000 * w / n}')
        [[ $n != "${MEASURED[0]}" ]] || base=$per
        rel=$(awk -v p="$per" -v b="$base" 'BEGIN {if (b > 0) printf "%.2f", p / b; else print "-"}')
        ratio=$(awk -v w="$wall" -v f="$fw" 'BEGIN {if (f + 0 > 0) printf "%.1f", w / f; else print "-"}')
        printf '%6s %9s %9.1f %9s %9s %10s %10s %10s\n' "$n" "$wall" \
            "$(awk -v k="$kib" 'BEGIN {print k / 1024}')" "$per" "$rel" "$fw" "$fm" "$ratio"
    done
done

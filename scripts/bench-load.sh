#!/usr/bin/env bash
# Loading the module and thunk frames of the four pax archives (../shared/data) from
# Python: the peer, NVIDIA JAX-Toolbox's nsys-jax, against njx's Python loader, run
# alternately ROUNDS times (the order swapped every round). Prints, as a Markdown table,
# the median of each measure and the ratio njx / nsys-jax of the medians.
#
# What is timed, per side, in a fresh Python process each round:
#  - nsys-jax: what the Analysis notebook's loading cells do for these frames (its cells
#    2-3): ensure_compiled_protos_are_importable(prefix) (protoc on the archive's protos/,
#    which load_profiler_data would otherwise do itself), then
#    load_profiler_data(prefix, frames={"module", "thunk"}) (the NVTX GPU projection of
#    every rank read, thunks attributed to modules and devices, each thunk classified as
#    communication or not from the HLO dumps, the hidden time of overlapped communication)
#    and remove_autotuning_detail (drops ProgramId "unknown"). Not timed: the notebook's
#    align_profiler_data_timestamps and apply_warmup_heuristics (the first needs the
#    communication frame, an analysis beyond loading; the second only splits the frames)
#    and the compile frame (the push/pop trace, which njx.load's modules and thunks do not
#    read).
#  - njx: `d = njx.load(ARCHIVES); d.modules; d.thunks` (PYTHONPATH=python,
#    NJX_BIN_DIR=target/release), ARCHIVES the four zip paths as a list.
#  "load s" is that part alone, timed inside the process (time.perf_counter) after its
#  imports: pandas is imported first on both sides (nsys_jax imports it; njx.load would
#  otherwise pay for it), so neither side's load includes pandas' import. "process s" is
#  the whole process (interpreter start, imports, load, exit), timed outside it.
#  "max RSS MiB" is the largest resident set of any one process of the run (the kernel's
#  ru_maxrss of the waited process, which covers its waited children: nsys-jax's pool
#  workers, njx's binaries) -- /usr/bin/time -v's "Maximum resident set size". "tree PSS
#  MiB" is the peak, sampled every 50 ms from /proc, of the proportional set sizes summed
#  over the process and all its descendants alive at once: the memory the load takes when
#  it runs several processes (pages shared by forked workers counted once).
#
# Four ranks, nsys-jax: the four archives merged once by its nsys-jax-combine and
# extracted (not timed; the time it took is printed once), then load_profiler_data on
# that one prefix. This is the peer's own way to analyse a multi-process run (its docs and
# the notebook: nsys-jax-combine, then the notebook on the combined archive), and the one
# that gives what njx.load gives for four paths: one module and one thunk frame over all
# four ranks' devices (its loader reads each rank's trace.parquet in a multiprocessing
# pool of min(ranks, CPUs) workers, remaps program ids per rank and sorts the concatenated
# frames across ranks). Loading each archive on its own instead would give four unrelated
# frame sets that the notebook's later cells (alignment across devices, collectives)
# cannot use, and load_profiler_data cannot read a zip (it needs an extracted folder).
#
# The peer is installed once into target/peer-venv (reused afterwards; delete it to
# reinstall): a Python >= 3.12 (as the peer's pyproject.toml requires) venv with the
# nsys_jax package from a JAX-Toolbox source (NJX_PEER_SRC, else a shallow clone of
# github.com/NVIDIA/JAX-Toolbox), installed without its declared dependencies, and from
# PyPI what loading needs: numpy, pandas, pyarrow, protobuf, and grpcio-tools for a protoc
# that matches that protobuf (a `protoc` in the venv's bin runs `python -m
# grpc_tools.protoc`; the peer looks for protoc there first). jax, cuda-python, ipython and
# the analyses' packages are left out: loading imports none of them. Where PyPI cannot be
# reached it prints `bench-load: skipped: …` and exits 0, as it does without the data or
# without a peer source.
#
# Usage (from anywhere):  scripts/bench-load.sh [ROUNDS]      default 5
#
# Environment: NJX_PEER_SRC=PATH  JAX-Toolbox's nsys-jax: a git repository of JAX-Toolbox
#                (bare or not; HEAD is used), a checkout of it, or its
#                .github/container/nsys_jax folder
#              NJX_PEER_BASE_PYTHON=EXE  Python >= 3.12 for the venv (default: the first
#                of python3.13, python3.12, python3 that is one, else pyenv's newest 3.12+)
#              NJX_PYTHON=EXE  the Python that runs njx's side (default: the venv's, so
#                both sides use the same Python, pandas and pyarrow; njx's side needs
#                pandas)
#              NJX_BIN_DIR=DIR  njx's binaries (default: target/release; not built here)
#              NJX_PYTHONPATH=DIR  where njx's Python package is (default: python)

set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
say() { echo "bench-load: $*" >&2; }
skip() { echo "bench-load: skipped: $*"; exit 0; }

data=../shared/data/pax_fsdp4_4proc
archives=("$data"/pax_fsdp4_4proc_proc{0,1,2,3}.zip)
for a in "${archives[@]}"; do [ -e "$a" ] || skip "$a absent"; done
abs=()
for a in "${archives[@]}"; do abs+=("$(cd "$(dirname "$a")" && pwd)/$(basename "$a")"); done

venv=target/peer-venv
ready=$venv/.bench-load-ready
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

base_python() { # prints a Python >= 3.12, or nothing
    local c v
    for c in ${NJX_PEER_BASE_PYTHON:-} python3.13 python3.12 python3; do
        if "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
            command -v "$c"
            return
        fi
    done
    if command -v pyenv > /dev/null; then
        for v in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.(1[2-9]|[2-9][0-9])' | sort -V -r); do
            c=$(pyenv prefix "$v" 2>/dev/null)/bin/python3
            if "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
                echo "$c"
                return
            fi
        done
    fi
}

peer_source() { # extracts the peer's nsys_jax project into $work/peer-src; prints what it is
    local src=${NJX_PEER_SRC:-} sub=.github/container/nsys_jax
    mkdir -p "$work/peer-src"
    if [ -z "$src" ]; then
        src=$work/jax-toolbox
        GIT_TERMINAL_PROMPT=0 timeout 300 git clone -q --depth 1 --filter=blob:none --sparse \
            https://github.com/NVIDIA/JAX-Toolbox "$src" > /dev/null 2>&1 &&
            git -C "$src" sparse-checkout set "$sub" > /dev/null 2>&1 || return 1
    fi
    local gitdir=""
    if git --git-dir="$src" rev-parse --verify -q HEAD > /dev/null 2>&1; then
        gitdir=$src
    elif git -C "$src" rev-parse --verify -q HEAD > /dev/null 2>&1 &&
        [ "$(git -C "$src" rev-parse --show-toplevel)" = "$(cd "$src" && pwd -P)" ]; then
        gitdir=$(git -C "$src" rev-parse --absolute-git-dir)
    fi
    if [ -n "$gitdir" ] && git --git-dir="$gitdir" cat-file -e "HEAD:$sub" 2> /dev/null; then
        git --git-dir="$gitdir" archive "HEAD:$sub" | tar -x -C "$work/peer-src"
        echo "JAX-Toolbox $(git --git-dir="$gitdir" log -1 --format='%h (%cs)' HEAD), $sub"
    elif [ -f "$src/pyproject.toml" ] && [ -d "$src/nsys_jax" ]; then
        cp -R "$src/." "$work/peer-src/"
        echo "$src"
    elif [ -f "$src/$sub/pyproject.toml" ]; then
        cp -R "$src/$sub/." "$work/peer-src/"
        echo "$src/$sub"
    else
        return 1
    fi
}

setup_peer() {
    local py described version
    py=$(base_python)
    [ -n "$py" ] || skip "no Python >= 3.12 for the peer (nsys-jax requires it; set NJX_PEER_BASE_PYTHON)"
    described=$(peer_source) || skip "no nsys-jax source (set NJX_PEER_SRC to a JAX-Toolbox checkout or git repository; github.com unreachable)"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    "$py" -m venv "$venv"
    say "installing the peer into $venv ($described; $("$py" --version))"
    if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check \
        numpy pandas pyarrow protobuf grpcio-tools 'setuptools>=64' 'setuptools_scm>=8' \
        > "$work/pip.log" 2>&1; then
        tail -n 3 "$work/pip.log" >&2
        rm -rf "$venv"
        skip "PyPI cannot be reached (pip install of the peer's dependencies failed)"
    fi
    # Outside its git repository setuptools_scm cannot find the version: give one.
    version="0+$(echo "$described" | grep -oE '^JAX-Toolbox [0-9a-f]+' | sed 's/JAX-Toolbox /g/' || true)"
    [ "$version" = "0+" ] && version=0+local
    SETUPTOOLS_SCM_PRETEND_VERSION=$version "$venv/bin/python" -m pip install -q \
        --disable-pip-version-check --no-deps --no-build-isolation "$work/peer-src" > "$work/pip.log" 2>&1 ||
        { cat "$work/pip.log" >&2; exit 1; }
    cat > "$venv/bin/protoc" <<'SH'
#!/bin/sh
# protoc of grpcio-tools, built against the protobuf runtime installed beside it.
exec "$(dirname "$0")/python" -m grpc_tools.protoc "$@"
SH
    chmod +x "$venv/bin/protoc"
    "$venv/bin/python" -c 'import nsys_jax, grpc_tools.protoc' ||
        { say "the peer does not import in $venv"; exit 1; }
    echo "$described" > "$ready"
}

[ -f "$ready" ] || setup_peer
PEER=$venv/bin/python
NJX_PY=${NJX_PYTHON:-$PEER}
BIN_DIR=${NJX_BIN_DIR:-target/release}
NJX_PP=${NJX_PYTHONPATH:-python}

# The measuring wrapper: runs a command, samples its process tree's PSS, reports.
cat > "$work/measure.py" <<'PY'
import json, os, subprocess, sys, time

out, cmd = sys.argv[1], sys.argv[2:]

def tree_pss_kb(root):
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    parent[int(d)] = int(f.read().rpartition(")")[2].split()[1])
            except OSError:
                pass
    tree, todo = [], [root]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += [c for c, pp in parent.items() if pp == p]
    total = 0
    for p in tree:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                total += next(int(l.split()[1]) for l in f if l.startswith("Pss:"))
        except (OSError, StopIteration):
            pass
    return total

start = time.perf_counter()
child = subprocess.Popen(cmd, stdout=open(out, "w"), stderr=open(out + ".err", "w"))
peak = 0
while True:
    pid, status, usage = os.wait4(child.pid, os.WNOHANG)
    if pid:
        break
    peak = max(peak, tree_pss_kb(child.pid))
    time.sleep(0.05)
wall = time.perf_counter() - start
child.returncode = os.waitstatus_to_exitcode(status)
report = {"process_s": wall, "maxrss_kb": usage.ru_maxrss, "tree_pss_kb": peak,
          "rc": child.returncode}
for line in open(out):
    if line.startswith("BENCH "):
        report.update(json.loads(line[6:]))
if child.returncode != 0 or "load_s" not in report:
    report["stderr"] = open(out + ".err").read()[-3000:]
print(json.dumps(report))
PY

# nsys-jax's side: the archives merged once, extracted; then each round loads the folder.
cat > "$work/side-peer.py" <<'PY'
import json, pathlib, resource, sys, time
t0 = time.perf_counter()
import pandas
from nsys_jax import (ensure_compiled_protos_are_importable, load_profiler_data,
                      remove_autotuning_detail)
t1 = time.perf_counter()
prefix = pathlib.Path(sys.argv[1])
ensure_compiled_protos_are_importable(prefix=prefix)
t2 = time.perf_counter()
data = load_profiler_data(prefix, frames={"module", "thunk"})
loaded = len(data.module), len(data.thunk)
data = remove_autotuning_detail(data)
t3 = time.perf_counter()
print("BENCH " + json.dumps({
    "import_s": t1 - t0, "protoc_s": t2 - t1, "load_s": t3 - t1,
    "modules": loaded[0], "thunks": loaded[1],
    "modules_kept": len(data.module), "thunks_kept": len(data.thunk),
    "devices": int(data.thunk.index.get_level_values("Device").nunique()),
    "self_maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
PY
# njx's side.
cat > "$work/side-njx.py" <<'PY'
import json, resource, sys, time
t0 = time.perf_counter()
import pandas
import njx
t1 = time.perf_counter()
d = njx.load(sys.argv[1:])
m = d.modules
t = d.thunks
t2 = time.perf_counter()
print("BENCH " + json.dumps({
    "import_s": t1 - t0, "load_s": t2 - t1, "modules": len(m), "thunks": len(t),
    "self_maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
PY

start=$(date +%s%N)
"$venv/bin/nsys-jax-combine" -f -o "$work/combined.zip" "${abs[@]}" > "$work/combine.log" 2>&1 ||
    { cat "$work/combine.log" >&2; exit 1; }
"$PEER" -m zipfile -e "$work/combined.zip" "$work/combined"
prepare_s=$(( ($(date +%s%N) - start) / 1000000 ))e-3

njx_ok=1
if [ ! -f "$NJX_PP/njx/__init__.py" ] && [ ! -f "$NJX_PP/njx.py" ]; then
    say "njx's side skipped: $NJX_PP/njx absent (njx's Python package is not in this checkout)"
    njx_ok=0
elif [ ! -x "$BIN_DIR/njx-export" ]; then
    say "njx's side skipped: no binaries in $BIN_DIR (build them: cargo build --release)"
    njx_ok=0
fi

run_peer() {
    "$PEER" "$work/measure.py" "$work/out" "$PEER" "$work/side-peer.py" "$work/combined" |
        sed 's/^/nsys-jax /' >> "$work/results"
}
run_njx() {
    PYTHONPATH=$NJX_PP${PYTHONPATH:+:$PYTHONPATH} NJX_BIN_DIR=$BIN_DIR \
        "$PEER" "$work/measure.py" "$work/out" "$NJX_PY" "$work/side-njx.py" "${abs[@]}" |
        sed 's/^/njx /' >> "$work/results"
}
: > "$work/results"
for ((k = 0; k < ROUNDS; k++)); do
    if ((k % 2 == 0)); then
        run_peer
        ((njx_ok)) && run_njx
    else
        ((njx_ok)) && run_njx
        run_peer
    fi
    say "round $((k + 1))/$ROUNDS: $(tail -n $((1 + njx_ok)) "$work/results" | tr '\n' ' ')"
done

"$PEER" - "$work/results" "$ROUNDS" "$prepare_s" "$(cat "$ready")" <<'PY'
import json, os, platform, statistics, sys
import pandas, pyarrow
rows = {}
for line in open(sys.argv[1]):
    side, _, record = line.partition(" ")
    rows.setdefault(side, []).append(json.loads(record))
for side, runs in rows.items():
    bad = [r for r in runs if r["rc"] != 0 or "load_s" not in r]
    if bad:
        sys.exit(f"bench-load: {side} failed (rc {bad[0]['rc']}):\n{bad[0].get('stderr', '')}")
med = lambda side, key: statistics.median(r[key] for r in rows[side])
peer = rows["nsys-jax"][0]
print(f"bench-load: {sys.argv[2]} rounds, alternating; the four pax archives "
      f"({peer['devices']} devices); nsys-jax {sys.argv[4]}; Python "
      f"{platform.python_version()}, pandas {pandas.__version__}, pyarrow "
      f"{pyarrow.__version__}; {os.cpu_count()} CPUs. Medians; ratio = njx / nsys-jax "
      f"of the medians. nsys-jax's load includes protoc ({med('nsys-jax', 'protoc_s'):.2f} s); "
      f"its nsys-jax-combine and extraction beforehand (not counted): "
      f"{float(sys.argv[3]):.1f} s. Rows: as loaded; nsys-jax keeps "
      f"{peer['modules_kept']:,} modules and {peer['thunks_kept']:,} thunks after "
      f"remove_autotuning_detail.")
print()
print("| loader | load s | process s | max RSS MiB | tree PSS MiB | modules | thunks |")
print("|---|---:|---:|---:|---:|---:|---:|")
names = {"nsys-jax": "nsys-jax `load_profiler_data` (combined prefix)",
         "njx": "njx `njx.load` (four archives)"}
for side in ("nsys-jax", "njx"):
    if side in rows:
        print(f"| {names[side]} | {med(side, 'load_s'):.2f} | {med(side, 'process_s'):.2f} "
              f"| {med(side, 'maxrss_kb') / 1024:.0f} | {med(side, 'tree_pss_kb') / 1024:.0f} "
              f"| {rows[side][0]['modules']:,} | {rows[side][0]['thunks']:,} |")
if "njx" in rows:
    r = lambda key: med("njx", key) / med("nsys-jax", key)
    print(f"| njx / nsys-jax | {r('load_s'):.3f} | {r('process_s'):.3f} "
          f"| {r('maxrss_kb'):.3f} | {r('tree_pss_kb'):.3f} | | |")
PY

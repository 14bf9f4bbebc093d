#!/usr/bin/env bash
# njx-combine against nsys-jax-combine (the peer) and against the floor, in alternating
# rounds: each round runs `njx-combine -o OUT ARCHIVES`, the peer on the same archives
# (when NJX_PEER_PYTHON imports nsys_jax) and two floors: `unzip -p` of every archive to
# /dev/null (each member read once and its CRC checked, which njx-combine's first pass
# must do; its second pass copies the stored bytes) and `cat` of the archives (their
# bytes read once), each under /usr/bin/time. Prints per job the
# median wall seconds, the median peak RSS, and the median of the per-round ratios of
# its time to njx-combine's.
#
# Usage (from anywhere):
#   scripts/bench-combine.sh [K] [ARCHIVE.zip...]   default: 5 rounds, the four pax archives
#   scripts/bench-combine.sh --synthetic N MB [K]   N generated archives (python3's zipfile):
#       per archive a differing table and GPU projection of MB MiB each (random: stored
#       once per profile), a report of MB MiB, and 64 shared dumps of 64 KiB (stored once)
#
# Environment: NJX_BIN=DIR  binaries (default: target/release, built first);
#              NJX_PEER_PYTHON  Python with nsys_jax importable (default: none, peer skipped).

set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-target}
BIN=${NJX_BIN:-}
if [ -z "$BIN" ]; then
    cargo build --release --quiet --bin njx-combine
    BIN=$TARGET/release
fi
BIN=$(cd "$BIN" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "${1:-}" = "--synthetic" ]; then
    n=$2 mb=$3 K=${4:-3}
    mkdir "$work/in"
    python3 - "$work/in" "$n" "$mb" <<'PY'
import os, sys, zipfile
out, n, mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
shared = [os.urandom(64 << 10) for _ in range(64)]
for r in range(n):
    with zipfile.ZipFile(f"{out}/rank{r}.zip", "w") as z:
        for name in ("report_nvtx_pushpop_trace.csv.xz", "nvtx_gpu_proj_trace/trace.parquet",
                     f"rank{r}.nsys-rep"):
            with z.open(name, "w", force_zip64=True) as f:
                for _ in range(mb):
                    f.write(os.urandom(1 << 20))
        for i, blob in enumerate(shared):
            z.writestr(f"dump/module_{i:04}.jit_f.hlo.pb.xz", blob)
PY
    set -- "$work"/in/*.zip
    echo "synthetic: $n archives, $(du -sh "$work/in" | cut -f1) in all"
else
    K=${1:-5}
    [ $# -gt 0 ] && shift
    if [ $# -eq 0 ]; then
        set -- ../shared/data/pax_fsdp4_4proc/*.zip
        [ -e "$1" ] || { echo "no archives given and ../shared/data absent: skipped"; exit 0; }
    fi
fi
for a in "$@"; do abs+=("$(cd "$(dirname "$a")" && pwd)/$(basename "$a")"); done

peer=""
if [ -n "${NJX_PEER_PYTHON:-}" ] && "$NJX_PEER_PYTHON" -c 'import nsys_jax' 2>/dev/null; then
    peer=$NJX_PEER_PYTHON
fi
measure() { # label command...: appends "label seconds kB" to $work/times
    local label=$1; shift
    rm -f "$work/out.zip"
    /usr/bin/time -f "$label %e %M" -a -o "$work/times" "$@" > /dev/null 2>&1
}
for ((k = 0; k < K; k++)); do
    measure njx-combine "$BIN/njx-combine" -q -f -o "$work/out.zip" "${abs[@]}"
    [ -n "$peer" ] && measure nsys-jax-combine "$peer" -c \
        'from nsys_jax.scripts.nsys_jax_combine import main; main()' -o "$work/out.zip" "${abs[@]}"
    measure "floor unzip -p" sh -c 'for a; do unzip -p "$a" > /dev/null; done' sh "${abs[@]}"
    measure "floor cat" sh -c 'cat "$@" > /dev/null' sh "${abs[@]}"
done
python3 - "$work/times" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
jobs = {}
for *label, s, kb in rows:
    label = " ".join(label)
    jobs.setdefault(label, []).append((float(s), int(kb)))
med = lambda xs: statistics.median(xs)
print(f"{'job':18} {'median s':>9} {'peak RSS MB':>12} {'job / njx':>10}")
njx = jobs["njx-combine"]
for label, runs in jobs.items():
    ratio = med([r[0] / max(n[0], 1e-3) for r, n in zip(runs, njx)])
    print(f"{label:18} {med([r[0] for r in runs]):9.2f} {med([r[1] for r in runs]) / 1024:12.1f} "
          f"{ratio:10.2f}")
PY

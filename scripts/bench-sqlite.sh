#!/usr/bin/env bash
# Time and peak memory of njx-export on a large synthetic nsys SQLite export.
#
# Usage (from the repository root):  scripts/bench-sqlite.sh [RANGES [KERNELS]]
#
# Builds the release binaries and the gen_sqlite example, generates (or reuses)
#   bench-data/nsys-<RANGES>-<KERNELS>.sqlite   (default 10M NVTX ranges, 1M kernels)
# then runs `njx-export FILE` (range records) and `njx-export --table gpu-ranges FILE`
# with stdout to /dev/null under /usr/bin/time and prints a table. The file is read once
# before timing, so the page cache holds it and disk speed is not measured.
#
# Environment: RUNS=N (default 1) runs every case N times and keeps the fastest;
# CARGO_TARGET_DIR is honoured. Delete bench-data/ to regenerate the input.

set -euo pipefail

cd "$(dirname "$0")/.."

RANGES=${1:-10M}
KERNELS=${2:-1M}
RUNS=${RUNS:-1}
TARGET=${CARGO_TARGET_DIR:-target}
DATA=bench-data
FILE=$DATA/nsys-$RANGES-$KERNELS.sqlite
GEN=$TARGET/release/examples/gen_sqlite
EXPORT=$TARGET/release/njx-export

echo "== building (release)" >&2
cargo build --release --quiet --bins --example gen_sqlite

mkdir -p "$DATA"
if [[ -f $FILE ]]; then
    echo "== reusing $FILE" >&2
else
    echo "== generating $FILE" >&2
    "$GEN" "$FILE.tmp" "$RANGES" "$KERNELS"
    mv "$FILE.tmp" "$FILE"
fi

if ! /usr/bin/time -f '%e %M' true > /dev/null 2>&1; then
    echo "GNU /usr/bin/time is needed for peak memory" >&2
    exit 1
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ROWS=()

# bench LABEL ARGS...: njx-export ARGS FILE > /dev/null, best of RUNS; records counted once.
bench() {
    local label=$1 best_s="" best_kb="" s kb i records
    shift
    cat "$FILE" > /dev/null
    for ((i = 0; i < RUNS; i++)); do
        echo "== njx-export $* $FILE (run $((i + 1))/$RUNS)" >&2
        /usr/bin/time -f '%e %M' -o "$TMP/t" "$EXPORT" "$@" "$FILE" > /dev/null 2> "$TMP/err"
        read -r s kb < "$TMP/t"
        if [[ -z $best_s ]] || awk -v a="$s" -v b="$best_s" 'BEGIN { exit !(a < b) }'; then
            best_s=$s
            best_kb=$kb
        fi
    done
    records=$("$EXPORT" "$@" "$FILE" 2> /dev/null | wc -l)
    ROWS+=("$(awk -v l="$label" -v n="$records" -v t="$best_s" -v k="$best_kb" 'BEGIN {
        printf "%-28s %12d %9.2f %12.0f %12.1f", l, n, t, (t > 0 ? n / t : 0), k * 1024 / 1e6
    }')")
}

bench "ranges" --table ranges
bench "gpu-ranges" --table gpu-ranges

SIZE=$(wc -c < "$FILE" | tr -d ' ')
echo
echo "njx-export on $FILE ($(awk -v s="$SIZE" 'BEGIN { printf "%.0f", s / 1e6 }') MB;" \
    "$(nproc) CPUs, best of $RUNS run(s); MB = 10^6 bytes)"
printf '%-28s %12s %9s %12s %12s\n' "table" "records" "seconds" "records/s" "peak RSS MB"
printf '%s\n' "${ROWS[@]}"

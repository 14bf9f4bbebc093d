#!/usr/bin/env bash
# Time and peak memory of njx-heap's replay on synthetic dumps whose trace keeps N buffers
# live at once, every event a new peak (the worst case for a replay that copies the live
# set at each new peak), against an earlier build where one is given.
#
# Usage (from the repository root):  scripts/bench-heap.sh [BASE_NJX_HEAP]
#
# Generates (or reuses) bench-data/heap-<N>/ and bench-data/heap-<N>-lean/ for N = 10,000,
# 40,000 and 200,000 with examples/gen_heap.rs: one fusion per buffer and named events
# (28 MB for 200,000), or 100 fusions and unnamed events (8 MB). Runs this build and
# BASE_NJX_HEAP (if given) alternately RUNS times (default 3) and prints each one's median
# seconds and peak RSS; a run of BASE longer than BASE_TIMEOUT seconds (default 120) is
# cut and shown as such. Needs GNU /usr/bin/time.

set -euo pipefail
cd "$(dirname "$0")/.."

BASE=${1:-}
RUNS=${RUNS:-3}
BASE_TIMEOUT=${BASE_TIMEOUT:-120}
TARGET=${CARGO_TARGET_DIR:-target}
NEW=$TARGET/release/njx-heap
DATA=bench-data

echo "== building (release)" >&2
cargo build --release --quiet --bin njx-heap --example gen_heap

mkdir -p "$DATA"
inputs=()
for n in 10000 40000 200000; do
    for kind in named lean; do
        dir=$DATA/heap-$n; args=("$n")
        [[ $kind == lean ]] && { dir=$DATA/heap-$n-lean; args=("$n" 100); }
        [[ -d $dir ]] || "$TARGET/release/examples/gen_heap" "$dir" "${args[@]}"
        inputs+=("$dir")
    done
done

# median of numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

one() { # one BIN INPUT LIMIT → "seconds kib" ("fail 0" when cut or failed)
    local out
    out=$( { /usr/bin/time -f '%e %M' timeout "$3" "$1" "$2" > /dev/null; } 2>&1 ) \
        || { echo "fail 0"; return; }
    echo "$out" | tail -1
}

printf '%-28s %12s %10s %12s %10s\n' input new_s new_MiB base_s base_MiB
for input in "${inputs[@]}"; do
    new_t=() new_m=() base_t=() base_m=()
    for _ in $(seq "$RUNS"); do
        read -r t m < <(one "$NEW" "$input" 600); new_t+=("$t"); new_m+=("$m")
        if [[ -n $BASE ]]; then
            read -r t m < <(one "$BASE" "$input" "$BASE_TIMEOUT"); base_t+=("$t"); base_m+=("$m")
        fi
    done
    nt=$(printf '%s\n' "${new_t[@]}" | median)
    nm=$(printf '%s\n' "${new_m[@]}" | median)
    bt=- bm=-
    if [[ -n $BASE ]]; then
        if printf '%s\n' "${base_t[@]}" | grep -q fail; then
            bt=">$BASE_TIMEOUT"
        else
            bt=$(printf '%s\n' "${base_t[@]}" | median)
            bm=$(( $(printf '%s\n' "${base_m[@]}" | median) / 1024 ))
        fi
    fi
    printf '%-28s %12s %10s %12s %10s\n' "$(basename "$input")" "$nt" "$((nm / 1024))" "$bt" "$bm"
done

#!/usr/bin/env bash
# Throughput and peak memory of njx-export on large synthetic nvtx_pushpop_trace CSVs, and
# of pipelines that read its records (njx-compile-summary --total, njx-flamefold --by stack).
#
# Usage (from the repository root):  scripts/bench-export.sh
#
# Builds the release binaries and the gen_pushpop example, generates (or reuses)
#   bench-data/pushpop-1g.csv     >= 1 GiB, for the plain-CSV and pipeline cases
#   bench-data/pushpop-200m.csv   ~200 MiB, and its .gz (gzip -1) and .xz (xz -T0 -1) copies
# then runs each case under /usr/bin/time and prints a table. MB are 10^6 bytes; MB/s is
# uncompressed CSV bytes per wall-clock second. Files are read once before timing, so the
# page cache holds them and disk speed is not measured.
#
# Environment: RUNS=N (default 1) runs every case N times and keeps the fastest;
# CARGO_TARGET_DIR is honoured. Delete bench-data/ to regenerate the inputs.

set -euo pipefail

cd "$(dirname "$0")/.."

RUNS=${RUNS:-1}
TARGET=${CARGO_TARGET_DIR:-target}
DATA=bench-data
BIG=$DATA/pushpop-1g.csv
SMALL=$DATA/pushpop-200m.csv
GEN=$TARGET/release/examples/gen_pushpop
EXPORT=$TARGET/release/njx-export
SUMMARY=$TARGET/release/njx-compile-summary
FLAMEFOLD=$TARGET/release/njx-flamefold

echo "== building (release)" >&2
cargo build --release --quiet --bins --example gen_pushpop

mkdir -p "$DATA"

file_size() { wc -c < "$1" | tr -d ' '; }

# generate PATH BYTES: writes PATH with gen_pushpop unless a big enough one exists.
generate() {
    local path=$1 bytes=$2
    if [[ -f $path && $(file_size "$path") -ge $bytes ]]; then
        echo "== reusing $path" >&2
        return
    fi
    echo "== generating $path ($bytes bytes)" >&2
    "$GEN" --bytes "$bytes" --seed 1 > "$path.tmp"
    mv "$path.tmp" "$path"
}

# compress TOOL ARGS... : makes $SMALL.<ext> unless it is newer than $SMALL.
compress() {
    local ext=$1
    shift
    local out=$SMALL.$ext
    if [[ -f $out && $out -nt $SMALL ]]; then
        echo "== reusing $out" >&2
        return
    fi
    echo "== compressing $out" >&2
    "$@" -c "$SMALL" > "$out.tmp"
    mv "$out.tmp" "$out"
}

generate "$BIG" $((1 << 30))
generate "$SMALL" $((200 << 20))
compress gz gzip -1
HAVE_XZ=1
if command -v xz > /dev/null; then
    compress xz xz -T0 -1
else
    HAVE_XZ=0
    echo "== xz not found: skipping the .xz case" >&2
fi

HAVE_TIME=1
if ! /usr/bin/time -f '%e %M' true > /dev/null 2>&1; then
    HAVE_TIME=0
    echo "== GNU /usr/bin/time not found: using bash's time; peak memory unavailable" >&2
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# timed OUT CMD...: runs CMD with stdout to /dev/null; writes "seconds peak_kb" to OUT.
timed() {
    local out=$1
    shift
    if ((HAVE_TIME)); then
        /usr/bin/time -f '%e %M' -o "$out" "$@" > /dev/null
    else
        local TIMEFORMAT=%R
        { time "$@" > /dev/null 2> /dev/null; } 2> "$out.t"
        echo "$(cat "$out.t") -" > "$out"
    fi
}

ROWS=()

# row LABEL FILE UNCOMPRESSED_BYTES SECONDS PEAK: one line of the result table.
row() {
    local label=$1 file=$2 raw=$3 secs=$4 peak=$5
    ROWS+=("$(awk -v l="$label" -v s="$(file_size "$file")" -v r="$raw" -v t="$secs" -v p="$peak" '
        BEGIN {
            rate = (t > 0) ? sprintf("%.1f", r / 1e6 / t) : "inf"
            printf "%-34s %10.1f %9.2f %9s %12s", l, s / 1e6, t, rate, p
        }')")
}

# peak_mb KB...: the peak RSS in MB, several processes joined with " + ".
peak_mb() {
    local out=() kb
    for kb in "$@"; do
        if [[ $kb == - ]]; then out+=("n/a"); else out+=("$(awk -v k="$kb" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')"); fi
    done
    local IFS=+
    echo "${out[*]}" | sed 's/+/ + /g'
}

# bench LABEL FILE UNCOMPRESSED_BYTES [CMD...]: CMD (default: njx-export FILE) > /dev/null,
# best of RUNS.
bench() {
    local label=$1 file=$2 raw=$3 best_s="" best_kb="" s kb i
    shift 3
    local cmd=("$@")
    if ((${#cmd[@]} == 0)); then cmd=("$EXPORT" "$file"); fi
    cat "$file" > /dev/null
    for ((i = 0; i < RUNS; i++)); do
        echo "== ${cmd[*]} (run $((i + 1))/$RUNS)" >&2
        timed "$TMP/t" "${cmd[@]}"
        read -r s kb < "$TMP/t"
        if [[ -z $best_s ]] || awk -v a="$s" -v b="$best_s" 'BEGIN { exit !(a < b) }'; then
            best_s=$s
            best_kb=$kb
        fi
    done
    row "$label" "$file" "$raw" "$best_s" "$(peak_mb "$best_kb")"
}

# bench_pipeline LABEL FILE CMD...: njx-export FILE | CMD > /dev/null.
bench_pipeline() {
    local label=$1 file=$2 raw best_s="" best_peak="" s kb1 kb2 t0 t1 i
    shift 2
    raw=$(file_size "$file")
    cat "$file" > /dev/null
    for ((i = 0; i < RUNS; i++)); do
        echo "== njx-export $file | $label (run $((i + 1))/$RUNS)" >&2
        t0=$(date +%s.%N)
        if ((HAVE_TIME)); then
            /usr/bin/time -f '%e %M' -o "$TMP/p1" "$EXPORT" "$file" |
                /usr/bin/time -f '%e %M' -o "$TMP/p2" "$@" > /dev/null
        else
            "$EXPORT" "$file" | "$@" > /dev/null
        fi
        t1=$(date +%s.%N)
        s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
        if ((HAVE_TIME)); then
            read -r _ kb1 < "$TMP/p1"
            read -r _ kb2 < "$TMP/p2"
        else
            kb1=- kb2=-
        fi
        if [[ -z $best_s ]] || awk -v a="$s" -v b="$best_s" 'BEGIN { exit !(a < b) }'; then
            best_s=$s
            best_peak=$(peak_mb "$kb1" "$kb2")
        fi
    done
    row "export | $label" "$file" "$raw" "$best_s" "$best_peak"
}

BIG_RAW=$(file_size "$BIG")
SMALL_RAW=$(file_size "$SMALL")
bench "plain CSV (1 GiB)" "$BIG" "$BIG_RAW"
bench "plain CSV (200 MiB)" "$SMALL" "$SMALL_RAW"
bench "gzip -1 (200 MiB CSV)" "$SMALL.gz" "$SMALL_RAW"
if ((HAVE_XZ)); then
    bench "xz -1 (200 MiB CSV)" "$SMALL.xz" "$SMALL_RAW"
fi
bench_pipeline "compile-summary --total" "$BIG" "$SUMMARY" --total
bench_pipeline "flamefold --by stack" "$BIG" "$FLAMEFOLD"
# njx-flamefold's memory follows the distinct stacks, not the input: the 200 MiB trace read
# once, then five times as five profiles (links with other names) into the same stacks.
for i in 1 2 3 4 5; do ln -sf "$(basename "$SMALL")" "$DATA/copy$i.csv"; done
bench "flamefold --by stack (200 MiB)" "$SMALL" "$SMALL_RAW" "$FLAMEFOLD" "$SMALL"
bench "flamefold --by stack (5 x 200 MiB)" "$SMALL" $((5 * SMALL_RAW)) "$FLAMEFOLD" "$DATA"/copy[1-5].csv

echo
echo "njx-export throughput ($(nproc) CPUs, best of $RUNS run(s); MB = 10^6 bytes)"
printf '%-34s %10s %9s %9s %12s\n' "input" "size MB" "seconds" "MB/s" "peak RSS MB"
printf '%s\n' "${ROWS[@]}"
if ((!HAVE_TIME)); then
    echo "(peak memory unavailable: GNU /usr/bin/time not found)"
fi

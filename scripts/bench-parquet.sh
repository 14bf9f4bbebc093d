#!/usr/bin/env bash
# `--format parquet` against `--format json` (issue 43's measure): the thunk export of the
# pax archives (or the inputs given) written both ways to a file, alternately, ROUNDS
# times; prints the median wall seconds and peak RSS of each, the median of the per-round
# ratios parquet/json (neighbouring runs, so a shared machine's load moves both alike) and
# the two files' sizes.
#
# Usage (from the repository root; NJX_BIN: the folder of the tools, target/release):
#   scripts/bench-parquet.sh [ROUNDS [TABLE [INPUT…]]]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-7}
TABLE=${2:-thunks}
shift $(( $# > 2 ? 2 : $# ))
if [[ $# -gt 0 ]]; then inputs=("$@"); else inputs=(../shared/data/pax_fsdp4_4proc/*.zip); fi
BIN=$(cd "${NJX_BIN:-target/release}" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# run FORMAT: "seconds KiB" of one export to $TMP/out.FORMAT.
run() {
    /usr/bin/time -f '%e %M' -o "$TMP/time" "$BIN/njx-export" -q -f --table "$TABLE" \
        --format "$1" -o "$TMP/out.$1" "${inputs[@]}"
    cat "$TMP/time"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

run json > /dev/null # warm the page cache
for _ in $(seq "$ROUNDS"); do
    read -r js jm < <(run json)
    read -r ps pm < <(run parquet)
    echo "$js $jm $ps $pm" >> "$TMP/rounds"
    awk -v j="$js" -v p="$ps" 'BEGIN { printf "%.3f\n", p / j }' >> "$TMP/ratios"
done
jsize=$(stat -c %s "$TMP/out.json")
psize=$(stat -c %s "$TMP/out.parquet")
printf 'njx-export --table %s, %d inputs, %d rounds alternating\n' "$TABLE" "${#inputs[@]}" "$ROUNDS"
printf '%-8s %8s %10s %12s\n' format median_s peak_MiB bytes
printf '%-8s %8s %10s %12s\n' json "$(cut -d' ' -f1 "$TMP/rounds" | median)" \
    "$(( $(cut -d' ' -f2 "$TMP/rounds" | median | cut -d. -f1) / 1024 ))" "$jsize"
printf '%-8s %8s %10s %12s\n' parquet "$(cut -d' ' -f3 "$TMP/rounds" | median)" \
    "$(( $(cut -d' ' -f4 "$TMP/rounds" | median | cut -d. -f1) / 1024 ))" "$psize"
printf 'parquet/json time: median of per-round ratios %s; size %s\n' "$(median < "$TMP/ratios")" \
    "$(awk -v p="$psize" -v j="$jsize" 'BEGIN { printf "%.3f (1/%.0f)", p / j, j / p }')"

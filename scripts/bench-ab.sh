#!/usr/bin/env bash
# Two builds of njx against each other: each command run with the binaries of A, then of
# B, alternately, ROUNDS times; prints per command the median wall seconds of each and
# the median of the per-round ratios B/A (neighbouring runs, so a shared machine's load
# moves both alike). Output goes to /dev/null; a command that fails stops the script.
#
# Usage (from the repository root):
#   scripts/bench-ab.sh A_DIR B_DIR ROUNDS 'njx-tool ARGS…' ['njx-tool ARGS…' …]
#
# A_DIR and B_DIR hold the njx-* binaries (copies of target/release from two commits).
# Each command is a shell line whose first word is a tool name; pipelines of njx tools
# work too (every `njx-` word is resolved in the build being timed).
set -euo pipefail
if [[ $# -lt 4 ]]; then
    sed -n '2,13p' "$0" >&2
    exit 2
fi
A=$(cd "$1" && pwd)
B=$(cd "$2" && pwd)
ROUNDS=$3
shift 3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# run DIR LINE: wall seconds of LINE with DIR first on PATH.
run() {
    local start end
    start=$(date +%s.%N)
    PATH="$1:$PATH" bash -o pipefail -c "$2" > /dev/null 2> "$TMP/err" || {
        echo "failed ($1): $2" >&2
        cat "$TMP/err" >&2
        exit 1
    }
    end=$(date +%s.%N)
    awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f\n", e - s }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

printf '%-70s %8s %8s %8s\n' command A_s B_s B/A
for line in "$@"; do
    : > "$TMP/a"
    : > "$TMP/b"
    : > "$TMP/r"
    run "$A" "$line" > /dev/null # warm the page cache
    for ((i = 0; i < ROUNDS; i++)); do
        a=$(run "$A" "$line")
        b=$(run "$B" "$line")
        echo "$a" >> "$TMP/a"
        echo "$b" >> "$TMP/b"
        awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f\n", (a > 0 ? b / a : 1) }' >> "$TMP/r"
    done
    printf '%-70s %8s %8s %8s\n' "${line:0:70}" "$(median < "$TMP/a")" "$(median < "$TMP/b")" \
        "$(median < "$TMP/r")"
done

#!/usr/bin/env bash
# Peak memory and time of njx-thunks (each view) and njx-timeline on a stream of thunk
# records with a million distinct thunks (issue 28: at most 256 MiB), against the floor:
# reading the records once (`wc -l`).
#
# Usage (from the repository root):  scripts/bench-thunks.sh [THUNKS]
#
# Generates (or reuses) bench-data/thunks-<THUNKS>.jsonl with python3: THUNKS records
# (default 1000000), one per distinct thunk `fusion.K` of one steady-state execution of one
# program, as njx-export --table thunks writes them. Runs each case RUNS times (default 3),
# alternating, and prints each one's median seconds and peak RSS. Needs GNU /usr/bin/time
# and python3.

set -euo pipefail
cd "$(dirname "$0")/.."

THUNKS=${1:-1000000}
RUNS=${RUNS:-3}
TARGET=${CARGO_TARGET_DIR:-target}
DATA=bench-data
FILE=$DATA/thunks-$THUNKS.jsonl

echo "== building (release)" >&2
cargo build --release --quiet --bin njx-thunks --bin njx-timeline

mkdir -p "$DATA"
if [[ ! -f $FILE ]]; then
    echo "== generating $FILE" >&2
    python3 - "$FILE.tmp" "$THUNKS" <<'EOF'
import sys
path, n = sys.argv[1], int(sys.argv[2])
head = ('{"profile":"p","program":"6f8097e242d8bf3b64f63c04c3f09c47","program_id":1,'
        '"module":"jit_step","execution":0,"device":0,')
tail = ('"hidden_ns":0,"comm":false,"warmup":false,"collective":null,"group_size":null,'
        '"message_bytes":null,"reconstructed":null}\n')
with open(path, "w") as f:
    for k in range(n):
        f.write('%s"name":"fusion.%d","thunk_execution":%d,"start_ns":%d,"dur_ns":%d,%s'
                % (head, k, k, 10 * k, 5 + k % 7, tail))
EOF
    mv "$FILE.tmp" "$FILE"
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cases=("floor: wc -l" "njx-thunks --view top" "njx-thunks --view variability"
       "njx-thunks --view top --format json" "njx-timeline")
run_case() {
    case $1 in
        0) wc -l "$FILE" ;;
        1) "$TARGET/release/njx-thunks" -q --view top "$FILE" ;;
        2) "$TARGET/release/njx-thunks" -q --view variability "$FILE" ;;
        3) "$TARGET/release/njx-thunks" -q --view top --format json "$FILE" ;;
        4) "$TARGET/release/njx-timeline" -q "$FILE" ;;
    esac
}
cat "$FILE" > /dev/null
for ((i = 0; i < RUNS; i++)); do
    echo "== run $((i + 1))/$RUNS" >&2
    for c in "${!cases[@]}"; do
        /usr/bin/time -f '%e %M' -o "$TMP/t" bash -c "$(declare -f run_case); \
            FILE='$FILE' TARGET='$TARGET' run_case $c" > /dev/null
        cat "$TMP/t" >> "$TMP/$c"
    done
done
median() { sort -n -k1,1 "$1" | awk '{ a[NR] = $1; m[NR] = $2 } END { i = int((NR + 1) / 2); print a[i], m[i] }'; }
printf '%-40s %10s %10s\n' "case ($THUNKS distinct thunks)" "seconds" "peak MiB"
for c in "${!cases[@]}"; do
    read -r s kb <<< "$(median "$TMP/$c")"
    printf '%-40s %10s %10d\n' "${cases[$c]}" "$s" $((kb / 1024))
done

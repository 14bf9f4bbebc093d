#!/usr/bin/env bash
# Time and peak memory of `njx-export --table payloads` on a synthetic nsys SQLite export
# whose NVTX events carry structured payloads, against the floor: the sqlite3 command-line
# tool reading the same rows and columns (rowid, start, globalTid, domainId, textId, text,
# binaryData) to /dev/null.
#
# Usage (from the repository root):  scripts/bench-payloads.sh [EVENTS]
#
# Generates (or reuses) bench-data/payloads-<EVENTS>.sqlite with python3's sqlite3 module:
# EVENTS push/pop ranges (default 1000000), each carrying one payload: alternately XLA's
# XlaCollectiveDetailed (17 fields, 128 bytes) and NCCL's all-gather schema (2 fields, 16
# bytes), laid out as tests/njx/common/payloads.rs lays them out. Runs njx and the floor
# alternately RUNS times (default 3) and prints each one's median seconds and peak RSS and
# their ratio. The file is read once before timing (page cache). Needs GNU /usr/bin/time,
# sqlite3 and python3.

set -euo pipefail
cd "$(dirname "$0")/.."

EVENTS=${1:-1000000}
RUNS=${RUNS:-3}
TARGET=${CARGO_TARGET_DIR:-target}
DATA=bench-data
FILE=$DATA/payloads-$EVENTS.sqlite
EXPORT=$TARGET/release/njx-export

echo "== building (release)" >&2
cargo build --release --quiet --bin njx-export

mkdir -p "$DATA"
if [[ ! -f $FILE ]]; then
    echo "== generating $FILE" >&2
    python3 - "$FILE.tmp" "$EVENTS" <<'EOF'
import sqlite3, struct, sys
path, n = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(path)
db.executescript("""
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
  int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
  floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
CREATE TABLE NVTX_PAYLOAD_SCHEMAS (domainId INTEGER, schemaId INTEGER, name TEXT,
  type INTEGER, flags INTEGER, numEntries INTEGER, payloadSize INTEGER, alignTo INTEGER);
CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId INTEGER NOT NULL, schemaId INTEGER NOT NULL,
  idx INTEGER NOT NULL, flags INTEGER, type INTEGER, name TEXT, description TEXT,
  arrayOrUnionDetail INTEGER, offset INTEGER);
""")
H, I64, I32, U8, U64, SIZE = 80, 17, 15, 12, 18, 22
coll = [(H, "Source locations", 0), (H, "HLO", 8), (H, "Called HLO", 16), (H, "HLO name", 24),
        (I64, "HLO unique ID", 32), (H, "Framework op type", 40), (H, "Framework op name", 48),
        (H, "Source file", 56), (I32, "Source line", 64), (H, "Output shape", 72),
        (H, "Replica groups", 80), (U8, "Is pipelined", 88), (U8, "Is SPMD generated", 89),
        (H, "Collective group key", 96), (H, "Combiner key", 104),
        (H, "Scheduling group ID", 112), (H, "Stream annotation", 120)]
nccl = [(U64, "NCCL communicator ID", 0), (SIZE, "Message size [bytes]", 8)]
for sid, name, size, entries in [(1 << 32, "XlaCollectiveDetailed", 128, coll),
                                 (16777220, None, 16, nccl)]:
    db.execute("INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, ?, ?, 1, NULL, ?, ?, NULL)",
               (sid, name, len(entries), size))
    for i, (ty, nm, off) in enumerate(entries):
        db.execute("INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, ?, ?, NULL, ?, ?, NULL, NULL, ?)",
                   (sid, i, ty, nm, off or None))
db.execute("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (0, 75, 'TSL', ?, 1)",
           ((7 << 24) | 1,))
def blob(sid, payload):
    return struct.pack("<IIQQQ", 1, 0, sid, len(payload), 32 + len(payload)) + payload
def rows():
    for k in range(n):
        t = 1000 + 10 * k
        if k % 2 == 0:
            p = bytearray(128)
            for off in (0, 8, 16, 24, 40, 48, 56, 72, 80, 96, 104, 112, 120):
                struct.pack_into("<Q", p, off, 0x7f0000001000 + off)
            struct.pack_into("<q", p, 32, (1 << 32) + k % 500)
            struct.pack_into("<i", p, 64, k % 300)
            p[88] = k & 1
            yield (t, t + 5, "Thunk:#hlo_op=all-gather.%d#" % (k % 500), blob(1 << 32, bytes(p)))
        else:
            yield (t, t + 5, "ncclAllGather",
                   blob(16777220, struct.pack("<QQ", 0xabcdef, 4096 * (k % 64))))
db.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, binaryData) "
               "VALUES (?, ?, 59, ?, %d, 1, ?)" % ((7 << 24) | 1), rows())
db.commit()
EOF
    mv "$FILE.tmp" "$FILE"
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FLOOR_SQL='SELECT rowid, start, globalTid, domainId, textId, text, binaryData FROM NVTX_EVENTS WHERE binaryData IS NOT NULL'

cat "$FILE" > /dev/null
: > "$TMP/njx"
: > "$TMP/floor"
for ((i = 0; i < RUNS; i++)); do
    echo "== run $((i + 1))/$RUNS" >&2
    /usr/bin/time -f '%e %M' -o "$TMP/t" "$EXPORT" --table payloads "$FILE" > /dev/null 2> "$TMP/err"
    cat "$TMP/t" >> "$TMP/njx"
    /usr/bin/time -f '%e %M' -o "$TMP/t" sqlite3 "$FILE" "$FLOOR_SQL" > /dev/null
    cat "$TMP/t" >> "$TMP/floor"
done
records=$("$EXPORT" --table payloads "$FILE" 2> /dev/null | wc -l)

median() { sort -n -k1,1 "$1" | awk '{ a[NR] = $1; m[NR] = $2 } END { i = int((NR + 1) / 2); print a[i], m[i] }'; }
read -r njx_s njx_kb <<< "$(median "$TMP/njx")"
read -r floor_s floor_kb <<< "$(median "$TMP/floor")"
printf '%-34s %10s %10s %12s\n' "case ($EVENTS events)" "seconds" "peak MiB" "records"
printf '%-34s %10s %10d %12s\n' "njx-export --table payloads" "$njx_s" $((njx_kb / 1024)) "$records"
printf '%-34s %10s %10d %12s\n' "floor: sqlite3 reading the rows" "$floor_s" $((floor_kb / 1024)) "-"
awk -v a="$njx_s" -v b="$floor_s" 'BEGIN { printf "ratio njx / floor: %.2f\n", a / b }'

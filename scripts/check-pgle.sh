#!/usr/bin/env bash
# Checks njx-pgle against the peer, nsys-jax's pgle_costs analysis
# (nsys_jax/analyses/pgle_costs.py), on each profile alone and on all of them together
# (default: the four real pax archives in ../shared/data). The peer's costs come from
# scripts/pgle-peer.py, which calls the analysis' own steps (the analysis itself stops on
# archives whose compiled XLA protos predate OpMetadata.scheduling_name, and rounds to
# 0.1 µs); for all profiles together the archives are first merged with the peer's
# nsys-jax-combine, so its max/min runs over every device as njx-pgle's does over the
# archives given separately. For every program both write, the cost of every instruction
# must agree within 1e-6 relative, and the instruction sets must be equal. Every file
# njx-pgle wrote is also parsed back with protobuf's own text-format parser into a
# ProfiledInstructionsProto (field names and numbers as XLA's
# tsl/profiler/protobuf/profiled_instructions.proto), compiled here with protoc, and its
# costs compared with the file's. The peer's analysis itself (pgle_costs.py, unchanged) is
# then run too, on a copy of the extracted archive whose protos/xla/xla_data.proto gets
# OpMetadata.scheduling_name (field 16, as XLA's current xla_data.proto has it) where it
# lacks it: its files must be the same, line for line, with costs within its 0.05 µs
# rounding; how many names it left empty is said (njx-pgle writes instruction names
# there). Prints one line per comparison and exits 1 on any mismatch.
#
# Usage (from anywhere):  scripts/check-pgle.sh [ARCHIVE...]
#
# Environment: NJX_BIN=DIR     binaries (default: target/release, built first);
#              PEER_PYTHON=EXE a Python that imports nsys_jax and google.protobuf, with
#                              protoc on PATH (default: python3). Not run by CI.

set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -eq 0 ]; then
    set -- ../shared/data/pax_fsdp4_4proc/*.zip
    [ -e "$1" ] || { echo "no archives given and ../shared/data absent: SKIPPED"; exit 0; }
fi
PY=${PEER_PYTHON:-python3}
if ! "$PY" -c 'import nsys_jax, google.protobuf' 2>/dev/null; then
    echo "the peer (nsys_jax) is not importable with $PY: SKIPPED (set PEER_PYTHON, PYTHONPATH)"
    exit 0
fi
command -v protoc > /dev/null || { echo "protoc not on PATH: SKIPPED"; exit 0; }
TARGET=${CARGO_TARGET_DIR:-target}
BIN=${NJX_BIN:-}
if [ -z "$BIN" ]; then
    cargo build --release --quiet --bin njx-pgle
    BIN=$TARGET/release
fi
here=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The schema XLA parses profiles with, for protobuf's parser.
mkdir -p "$work/proto"
cp tests/data/profiled_instructions.proto "$work/proto/"
protoc -I "$work/proto" --python_out="$work/proto" "$work/proto/profiled_instructions.proto"

compare() { # label peer.tsv njx-dir
    PYTHONPATH="$work/proto${PYTHONPATH:+:$PYTHONPATH}" "$PY" - "$@" <<'PY'
import pathlib, re, sys
from google.protobuf import text_format
import profiled_instructions_pb2 as pb

label, peer_tsv, njx_dir = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
peer = {}
for line in open(peer_tsv):
    fp, name, us = line.rstrip("\n").split("\t")
    peer.setdefault(fp, {})[name] = float(us)
njx, bad = {}, []
line_re = re.compile(r'^costs \{ name: "((?:[^"\\]|\\.)*)" cost_us: (-?\d+\.\d{3}) \}$')
for f in sorted(njx_dir.glob("*.pbtxt")):
    text = f.read_text()
    parsed = text_format.Parse(text, pb.ProfiledInstructionsProto())
    lines = text.splitlines()
    if len(parsed.costs) != len(lines):
        bad.append(f"{f.name}: {len(parsed.costs)} costs parsed from {len(lines)} lines")
    for c, l in zip(parsed.costs, lines):
        m = line_re.match(l)
        if not m or m.group(1) != c.name or float(m.group(2)) != c.cost_us:
            bad.append(f"{f.name}: line {l!r} parsed as {c.name!r} {c.cost_us!r}")
    njx[f.stem] = {c.name: c.cost_us for c in parsed.costs}
worst, n, where = 0.0, 0, ""
for fp in sorted(set(peer) | set(njx)):
    a, b = peer.get(fp), njx.get(fp)
    if a is None or b is None:
        bad.append(f"program {fp}: written by {'njx' if a is None else 'the peer'} only")
        continue
    if set(a) != set(b):
        bad.append(f"program {fp}: instructions differ: peer only "
                   f"{sorted(set(a) - set(b))[:5]}, njx only {sorted(set(b) - set(a))[:5]}")
    for name in set(a) & set(b):
        x, y = a[name], b[name]
        rel = abs(x - y) / max(abs(x), abs(y)) if (x or y) else 0.0
        n += 1
        if rel > worst:
            worst, where = rel, f"{fp} {name}: peer {x!r} njx {y!r}"
        if rel > 1e-6:
            bad.append(f"program {fp} {name}: peer {x!r} µs, njx {y!r} µs")
print(f"{label}: {len(njx)} programs, {n} instructions compared, "
      f"max relative difference {worst:.3g}{' (' + where + ')' if where else ''}: "
      f"{'MISMATCH' if bad else 'ok'}")
for b in bad[:20]:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
}

peer_files() { # label extracted-folder njx-dir: the peer's analysis itself
    local label=$1 x=$2 njx=$3 run
    run=$(mktemp -d -p "$work")
    cp -r "$x" "$run/x"
    grep -q 'scheduling_name' "$run/x/protos/xla/xla_data.proto" ||
        sed -i '/^message OpMetadata {/,/^}/ s/^}$/  string scheduling_name = 16;\n}/' \
            "$run/x/protos/xla/xla_data.proto"
    (cd "$run" && "$PY" "$PEER_ANALYSIS" x > log 2>&1) ||
        { echo "$label: the peer's analysis failed:"; tail -3 "$run/log"; return 1; }
    "$PY" - "$label" "$run/maxcomm_mincompute" "$njx" <<'PY'
import pathlib, re, sys
label, peer, njx = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
rx = re.compile(r'^costs \{ name: "((?:[^"\\]|\\.)*)" cost_us: (-?[0-9.]+) \}$')
files = sorted(p.name for p in peer.glob("*.pbtxt"))
bad, n, empty, worst = [], 0, 0, 0.0
if files != sorted(p.name for p in njx.glob("*.pbtxt")):
    bad.append("the files written differ")
for f in files:
    a = [rx.match(l).groups() for l in (peer / f).read_text().splitlines()]
    b = [rx.match(l).groups() for l in (njx / f).read_text().splitlines()]
    if len(a) != len(b):
        bad.append(f"{f}: {len(a)} lines from the peer, {len(b)} from njx")
        continue
    for (na, ca), (nb, cb) in zip(a, b):
        n += 1
        empty += na == ""
        d = abs(float(ca) - float(cb))
        worst = max(worst, d)
        if (na and na != nb) or d > 0.05 + 1e-9:
            bad.append(f"{f}: peer {na!r} {ca}, njx {nb!r} {cb}")
print(f"{label}, the peer's own files: {len(files)} files, {n} lines, largest difference "
      f"{worst:.3f} µs (its %.1f rounding), {empty} names left empty by the peer: "
      f"{'MISMATCH' if bad else 'ok'}")
for b in bad[:20]:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
}
PEER_ANALYSIS=$("$PY" -c 'import nsys_jax, pathlib; print(pathlib.Path(nsys_jax.__file__).parent / "analyses" / "pgle_costs.py")')

status=0
for a in "$@"; do
    name=$(basename "$a" .zip)
    mkdir -p "$work/$name"
    unzip -q "$a" -d "$work/$name/x"
    (cd "$work/$name" && "$PY" "$here/scripts/pgle-peer.py" x > peer.tsv 2> peer.log)
    "$BIN/njx-pgle" -q -o "$work/$name/njx" "$a" > /dev/null
    compare "$name" "$work/$name/peer.tsv" "$work/$name/njx" || status=1
    peer_files "$name" "$work/$name/x" "$work/$name/njx" || status=1
done
if [ $# -gt 1 ]; then
    mkdir -p "$work/all"
    "$PY" -c 'import sys; from nsys_jax.scripts.nsys_jax_combine import main; sys.argv[0] = "nsys-jax-combine"; main()' \
        -o "$work/all/all.zip" "$@" > "$work/all/combine.log" 2>&1
    unzip -q "$work/all/all.zip" -d "$work/all/x"
    (cd "$work/all" && "$PY" "$here/scripts/pgle-peer.py" x > peer.tsv 2> peer.log)
    "$BIN/njx-pgle" -q -o "$work/all/njx" "$@" > /dev/null
    compare "all $# combined" "$work/all/peer.tsv" "$work/all/njx" || status=1
    peer_files "all $# combined" "$work/all/x" "$work/all/njx" || status=1
fi
exit $status

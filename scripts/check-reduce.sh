#!/usr/bin/env bash
# Checks that reducing partial results gives the report of one process (issue 41): on the
# N synthetic ranks of scripts/bench-scale.sh (target/scale/N, with its partials/, made by
# `NJX_SCALE_JOBS=report-reduce scripts/bench-scale.sh N`), compares the JSON of
#   njx-report rank*.zip                        (one process, every archive)
#   njx-report @list-of-partials                (one-level reduce)
#   njx-report groups-of-4-partials-reduced     (two-level reduce)
# key by key; only `inputs` and the kernels/memops sections (read from profiles only, and
# saying so) may differ. Exit 1 on a difference, naming the key.
#
# Usage: scripts/check-reduce.sh [N]   (default 16)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-16}
TARGET=${CARGO_TARGET_DIR:-target}
BIN=$(cd "$TARGET/release" && pwd)
DIR=$TARGET/scale/$N
[[ -d $DIR/partials ]] || { echo "check-reduce: no $DIR/partials: run NJX_SCALE_JOBS=report-reduce scripts/bench-scale.sh $N first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$DIR"
"$BIN/njx-report" -q --format json rank*.zip > "$tmp/one.json"
ls partials/rank*.report > "$tmp/list"
"$BIN/njx-report" -q --format json @"$tmp/list" > "$tmp/reduced.json"
split -l 4 "$tmp/list" "$tmp/g."
for g in "$tmp"/g.*; do "$BIN/njx-report" -q --partial @"$g" -o "$g.partial"; done
"$BIN/njx-report" -q --format json "$tmp"/g.*.partial > "$tmp/tree.json"
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
def load(name):
    r = json.load(open(f"{d}/{name}.json"))
    r.pop("inputs", None)
    for k in ("kernels", "memops"):
        r["sections"].pop(k, None)
    return r
one, reduced, tree = load("one"), load("reduced"), load("tree")
bad = [f"{what}: {k}" for what, r in (("one-level reduce", reduced), ("two-level reduce", tree))
       for k in sorted(set(one) | set(r)) if one.get(k) != r.get(k)]
for b in bad:
    print("check-reduce: differs from one process:", b, file=sys.stderr)
print(f"check-reduce: {len(one)} keys, {len(one['sections'])} sections: "
      + ("equal" if not bad else f"{len(bad)} differ"))
sys.exit(1 if bad else 0)
PY

#!/usr/bin/env bash
# Re-lays the real pax archives into XLA's 2026 NVTX layout (examples/relay_2026.rs: thunk
# names with unique_hlo_op_id, communication thunks at the top level with or without an
# async-start wrapper, communication only or partly as NCCL ranges, modules without thunk
# ranges) and compares every XLA tool's answer on each re-laid run with the original's.
#
#   scripts/relay-2026.sh [VARIANT...]     (default: all seven)
#
# Environment: NJX_DATA=DIR (default ../shared/data from the repo root). Builds the release
# binaries and the example first. Prints `same`/`DIFF` per variant and output, then the
# differing outputs' first lines; exit status 0 when only the expected differences remain
# (thunkless and mixed: the thunk counts of modules without thunk ranges, their missing
# thunk events in the timeline and their PGLE profiles), 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${NJX_DATA:-../shared/data}/pax_fsdp4_4proc
[[ -d $data ]] || { echo "relay-2026: $data not found" >&2; exit 2; }
variants=("$@")
[[ ${#variants[@]} -gt 0 ]] || variants=(ids top-level wrapped nccl nccl-partial thunkless mixed)
cargo build --release --quiet --bins --example relay_2026
bin=${CARGO_TARGET_DIR:-target}/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every XLA tool's outputs on the archives in $1, into folder $2.
outputs() {
  local d=$1 o=$2
  mkdir -p "$o/pgle"
  "$bin/njx-export" --table modules "$d"/*.zip > "$o/modules.jsonl" 2>/dev/null
  "$bin/njx-export" --table thunks "$d"/*.zip 2>/dev/null | sed 's/,"reconstructed":"[a-z]*"/,"reconstructed":null/' > "$o/thunks.jsonl"
  "$bin/njx-modules" "$d"/*.zip > "$o/modules.txt" 2>/dev/null
  "$bin/njx-collectives" "$d"/*.zip > "$o/collectives.txt" 2>/dev/null
  for t in instances wait-quantiles wait-histogram lateness; do
    "$bin/njx-collectives" --table $t "$d"/*.zip > "$o/collectives-$t.txt" 2>/dev/null
  done
  for by in source op-name opcode module device; do
    "$bin/njx-flamefold" --by $by "$d"/*.zip > "$o/flamefold-$by.folded" 2>/dev/null
  done
  "$bin/njx-thunks" "$d"/*.zip > "$o/thunks.txt" 2>/dev/null
  "$bin/njx-pgle" -o "$o/pgle" "$d"/*.zip > /dev/null 2>&1
  "$bin/njx-timeline" "$d"/*.zip > "$o/timeline.json" 2>/dev/null
}

outputs "$data" "$work/original"
status=0
for v in "${variants[@]}"; do
  "$bin/examples/relay_2026" "$v" "$work/$v" "$data"/*.zip 2>/dev/null
  outputs "$work/$v" "$work/out-$v"
  for f in $(cd "$work/original" && find . -type f | sort); do
    f=${f#./}
    if cmp -s "$work/original/$f" "$work/out-$v/$f"; then
      echo "same  $v  $f"
    else
      expected=no
      case "$v:$f" in
        thunkless:modules.jsonl|mixed:modules.jsonl|thunkless:modules.txt|mixed:modules.txt) expected=yes ;;
        thunkless:thunks.jsonl|mixed:thunks.jsonl|thunkless:timeline.json|mixed:timeline.json) expected=yes ;;
        thunkless:pgle/*|mixed:pgle/*) expected=yes ;;
      esac
      if [[ $expected == yes ]]; then
        echo "DIFF  $v  $f  (expected: modules without thunk ranges)"
      else
        echo "DIFF  $v  $f"
        diff "$work/original/$f" "$work/out-$v/$f" | head -5 || true
        status=1
      fi
    fi
  done
done
exit $status

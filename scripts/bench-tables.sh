#!/usr/bin/env bash
# Wall time and peak memory of njx on the real pax profiles in ../shared/data (skipped,
# saying so, when the folder is absent). Usage (from the repository root):
#   scripts/bench-tables.sh
set -euo pipefail
cd "$(dirname "$0")/.."
data=../shared/data/pax_fsdp4_4proc
if [[ ! -d $data ]]; then
    echo "skipped: $data not found" >&2
    exit 0
fi
cargo build --release --quiet --bins
bin=target/release
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
measure() {
    local label=$1; shift
    local best=""
    for _ in 1 2 3; do
        if [[ -x /usr/bin/time ]]; then
            /usr/bin/time -f '%e %M' -o "$tmp" "$@" > /dev/null 2>&1
            out=$(tail -1 "$tmp")
        else
            start=$(date +%s.%N); "$@" > /dev/null 2>&1; end=$(date +%s.%N)
            out="$(echo "$end - $start" | bc) n/a"
        fi
        if [[ -z $best ]] || awk -v a="${out%% *}" -v b="${best%% *}" 'BEGIN{exit !(a<b)}'; then
            best=$out
        fi
    done
    printf '%-50s %8s s %10s KB\n' "$label" ${best}
}
measure "export ranges, 4 archives" "$bin/njx-export" "$data"/*.zip
measure "export gpu-ranges, 4 archives" "$bin/njx-export" --table gpu-ranges "$data"/*.zip
measure "export thunks, 4 archives" "$bin/njx-export" --table thunks "$data"/*.zip
measure "export thunks, proc0" "$bin/njx-export" --table thunks "$data"/pax_fsdp4_4proc_proc0.zip
measure "compile-summary --total, 4 archives" "$bin/njx-compile-summary" --total "$data"/*.zip
measure "njx-modules, 4 archives" "$bin/njx-modules" "$data"/*.zip
measure "flamefold --by stack, proc0 compile" sh -c "'$bin/njx-export' '$data/pax_fsdp4_4proc_proc0.zip' | '$bin/njx-ranges' --xla-compile | '$bin/njx-flamefold'"
measure "flamefold --by source, 4 archives" "$bin/njx-flamefold" --by source "$data"/*.zip
measure "flamefold --by module, 4 archives" "$bin/njx-flamefold" --by module "$data"/*.zip

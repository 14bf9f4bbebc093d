#!/usr/bin/env bash
# njx against its floor on the four real pax archives (issue 13's first table): each job
# and the C tools decompressing the members that job reads are run alternately, K rounds,
# and the median of the per-round ratios njx/floor is printed with the median wall
# seconds and njx's peak RSS (the machine is shared: ratios of neighbouring runs are
# steadier than absolute times). Skipped, saying so, when ../shared/data is absent.
#
# Usage (from anywhere):  scripts/bench-floor.sh [K]        (default K = 5)
#
# Environment: NJX_BIN=DIR  binaries to measure (default: target/release, built first);
#              NJX_FLOOR_ONLY=REGEX  jobs whose label matches.
#
# Jobs (the pipelines of docs/pipelines.md):
#   compile proc0     njx-compile-summary --total proc0.zip
#   summary           the three outputs of the summary as docs/pipelines.md gives them:
#                     njx-export rank*.zip | njx-ranges --xla-compile | njx-compile-summary --total;
#                     njx-modules rank*.zip; njx-collectives rank*.zip (wait is in it)
#   communication     njx-collectives rank*.zip
#   communication pipe  njx-export --table thunks rank*.zip | njx-collectives (the records'
#                     way: issue 42's table)
#   fold source       njx-flamefold --by source rank*.zip
#   fold op-name      njx-flamefold --by op-name rank*.zip
#   thunk export      njx-export --table thunks rank*.zip
#   report            njx-report rank*.zip (the summary, communication and thunk tables
#                     from one reading; issue 30: at most 2x the floor)
#   report json       njx-report --format json rank*.zip
#   report html       njx-report --html page.html rank*.zip (also the page: at most 2.5x)
#   diff program      njx-diff rank*.zip --vs rank*.zip (two 4-rank runs; issue 31: at most
#                     2x reading both sides once)
#   diff instruction  njx-diff --by instruction rank*.zip --vs rank*.zip
#   diff collective   njx-diff --by collective rank*.zip --vs rank*.zip
#   modules twice     njx-modules rank*.zip, twice: njx reading both sides once
# Floors: `unzip -p` of the members the job reads, xz members through C `xz -dc`, one
# archive per core (`xargs -P $(nproc)`), as njx reads them:
#   csv   report_nvtx_pushpop_trace.csv.xz | xz -dc (compile)
#   all   that, plus nvtx_gpu_proj_trace/trace.parquet and thread-metadata.parquet (stored;
#         their snappy pages are not decoded) and dump/*after_optimizations* | xz -dc: every
#         member the GPU jobs read, once (the summary's floor is this too: reading the
#         archives once).
#   two   all, twice: both sides of a diff decompressed once each.

set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-5}
data=../shared/data/pax_fsdp4_4proc
if [[ ! -d $data ]]; then
    echo "skipped: $data not found" >&2
    exit 0
fi
data=$(cd "$data" && pwd)
if [[ -z ${NJX_BIN:-} ]]; then
    cargo build --release --quiet --bins
    BIN=$(pwd)/target/release
else
    BIN=$(cd "$NJX_BIN" && pwd)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=$(nproc)
ALL="$data/pax_fsdp4_4proc_proc*.zip"
P0="$data/pax_fsdp4_4proc_proc0.zip"

FLOOR_CSV="unzip -p $P0 report_nvtx_pushpop_trace.csv.xz | xz -dc > /dev/null"
FLOOR_ALL="ls $ALL | xargs -P $P -I{} bash -o pipefail -c \
'unzip -p {} report_nvtx_pushpop_trace.csv.xz | xz -dc > /dev/null && \
unzip -p {} nvtx_gpu_proj_trace/trace.parquet thread-metadata.parquet > /dev/null && \
unzip -p {} \"dump/*after_optimizations*\" | xz -dc > /dev/null'"
FLOOR_TWO="$FLOOR_ALL && $FLOOR_ALL"

LABELS=("compile proc0" "summary" "communication" "communication pipe" "fold source" "fold op-name" "thunk export"
    "report" "report json" "report html" "diff program" "diff instruction" "diff collective"
    "modules twice")
declare -A CMD=(
    ["compile proc0"]="$BIN/njx-compile-summary --total $P0"
    ["summary"]="$BIN/njx-export $ALL | $BIN/njx-ranges --xla-compile | $BIN/njx-compile-summary --total && $BIN/njx-modules $ALL && $BIN/njx-collectives $ALL"
    ["communication"]="$BIN/njx-collectives $ALL"
    ["communication pipe"]="$BIN/njx-export -q --table thunks $ALL | $BIN/njx-collectives"
    ["fold source"]="$BIN/njx-flamefold --by source $ALL"
    ["fold op-name"]="$BIN/njx-flamefold --by op-name $ALL"
    ["thunk export"]="$BIN/njx-export --table thunks $ALL"
    ["report"]="$BIN/njx-report $ALL"
    ["report json"]="$BIN/njx-report --format json $ALL"
    ["report html"]="$BIN/njx-report --html $tmp/page.html $ALL"
    ["diff program"]="$BIN/njx-diff $ALL --vs $ALL"
    ["diff instruction"]="$BIN/njx-diff --by instruction $ALL --vs $ALL"
    ["diff collective"]="$BIN/njx-diff --by collective $ALL --vs $ALL"
    ["modules twice"]="$BIN/njx-modules $ALL && $BIN/njx-modules $ALL"
)
declare -A FLOOR=(
    ["compile proc0"]=$FLOOR_CSV ["summary"]=$FLOOR_ALL ["communication"]=$FLOOR_ALL
    ["communication pipe"]=$FLOOR_ALL
    ["fold source"]=$FLOOR_ALL ["fold op-name"]=$FLOOR_ALL ["thunk export"]=$FLOOR_ALL
    ["report"]=$FLOOR_ALL ["report json"]=$FLOOR_ALL ["report html"]=$FLOOR_ALL
    ["diff program"]=$FLOOR_TWO ["diff instruction"]=$FLOOR_TWO ["diff collective"]=$FLOOR_TWO
    ["modules twice"]=$FLOOR_TWO
)

# run CMD: prints "WALL RSS_KIB" (RSS of the largest process of the command).
run() {
    /usr/bin/time -f '%e %M' -o "$tmp/time" bash -o pipefail -c "$1" > /dev/null 2> "$tmp/err" || {
        echo "bench-floor: failed: $1" >&2
        tail -3 "$tmp/err" >&2
        exit 1
    }
    tail -1 "$tmp/time"
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

cat $ALL > /dev/null
printf '%-18s %9s %9s %9s %10s   (%s cores, %s alternating rounds, medians)\n' \
    job "njx s" "floor s" njx/floor "RSS MiB" "$P" "$K"
for label in "${LABELS[@]}"; do
    [[ -z ${NJX_FLOOR_ONLY:-} || $label =~ $NJX_FLOOR_ONLY ]] || continue
    : > "$tmp/n"; : > "$tmp/f"; : > "$tmp/r"; : > "$tmp/m"
    for (( i = 0; i < K; i++ )); do
        read -r fw _ <<< "$(run "${FLOOR[$label]}")"
        read -r nw nm <<< "$(run "${CMD[$label]}")"
        echo "$nw" >> "$tmp/n"; echo "$fw" >> "$tmp/f"; echo "$nm" >> "$tmp/m"
        awk -v n="$nw" -v f="$fw" 'BEGIN {print (f > 0) ? n / f : 0}' >> "$tmp/r"
    done
    printf '%-18s %9.2f %9.2f %9.2f %10.0f\n' "$label" "$(median < "$tmp/n")" \
        "$(median < "$tmp/f")" "$(median < "$tmp/r")" "$(median < "$tmp/m" | awk '{print $1 / 1024}')"
done

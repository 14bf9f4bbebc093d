#!/usr/bin/env bash
# njx over the ranks of a run on a Slurm cluster: the map step as a job array (each task
# writes the partial results of its share of the rank archives), the reduce step as a
# job that starts when every map task has succeeded. The answers are exactly those of
# one process reading every rank (see examples/cluster/Makefile for the same with make).
#
#   examples/cluster/njx-slurm.sh submit RUN OUT [sbatch options…]
#
# RUN holds the rank archives (*.zip); OUT gets OUT/parts/ and the answers:
# modules.txt, collectives.txt, source.folded/.svg, op-name.folded/.svg, compile.txt,
# report.txt/.html.
# Both folders must be on a file system every node sees. Prints the two job ids.
#
# Environment: NJX (folder of the njx binaries with a trailing slash; default on PATH),
# NJX_TASKS (map tasks, default min(ranks, 1000): Slurm's default MaxArraySize is 1001,
# so with more ranks each task takes every NJX_TASKS-th archive).
# The script submits itself: `map` and `reduce` are its modes inside the jobs.
set -euo pipefail

mode=${1:?usage: njx-slurm.sh submit RUN OUT [sbatch options…]}
run=${2:?RUN folder of rank archives}
out=${3:?OUT folder}
shift 3
NJX=${NJX:-}

archives() {
    shopt -s nullglob
    ARCHIVES=("$run"/*.zip)
    (( ${#ARCHIVES[@]} > 0 )) || { echo "njx-slurm: no *.zip archives in $run" >&2; exit 1; }
}

# map_one ARCHIVE: every analysis' partial result of one rank, each written under a
# temporary name and renamed, so a killed task leaves no partial that looks complete (-f:
# a partial is an input of njx, which a retried task writes over).
map_one() {
    local a=$1 r p
    r=$(basename "$a" .zip)
    p=$out/parts
    "${NJX}njx-modules" --partial -f "$a" -o "$p/$r.modules.tmp"
    "${NJX}njx-collectives" --partial -f "$a" -o "$p/$r.collectives.tmp"
    "${NJX}njx-flamefold" --by source --partial -f "$a" -o "$p/$r.source.tmp"
    "${NJX}njx-flamefold" --by op-name --partial -f "$a" -o "$p/$r.op-name.tmp"
    "${NJX}njx-export" "$a" | "${NJX}njx-ranges" --xla-compile -o "$p/$r.compile.tmp"
    "${NJX}njx-report" --partial -f "$a" -o "$p/$r.report.tmp"
    for k in modules collectives source op-name compile report; do
        mv "$p/$r.$k.tmp" "$p/$r.$k"
    done
}

case $mode in
submit)
    command -v sbatch > /dev/null || { echo "njx-slurm: sbatch not found" >&2; exit 1; }
    archives
    run=$(cd "$run" && pwd)
    mkdir -p "$out/parts"
    out=$(cd "$out" && pwd)
    n=${#ARCHIVES[@]}
    tasks=${NJX_TASKS:-$(( n < 1000 ? n : 1000 ))}
    script=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
    map=$(sbatch --parsable --job-name=njx-map --array="0-$(( tasks - 1 ))" \
        --output="$out/parts/map-%A_%a.log" "$@" \
        --export="ALL,NJX=$NJX,NJX_TASKS=$tasks" "$script" map "$run" "$out")
    reduce=$(sbatch --parsable --job-name=njx-reduce --dependency="afterok:${map%%;*}" \
        --output="$out/reduce-%j.log" "$@" --export="ALL,NJX=$NJX" "$script" reduce "$run" "$out")
    echo "map job ${map%%;*} ($tasks tasks over $n archives), reduce job ${reduce%%;*}: answers in $out"
    ;;
map)
    archives
    task=${SLURM_ARRAY_TASK_ID:?map runs as a Slurm array task}
    tasks=${NJX_TASKS:?}
    for (( i = task; i < ${#ARCHIVES[@]}; i += tasks )); do
        map_one "${ARCHIVES[i]}"
    done
    ;;
reduce)
    archives
    p=$out/parts
    ranks=()
    for a in "${ARCHIVES[@]}"; do ranks+=("$(basename "$a" .zip)"); done
    parts() { printf "$p/%s.$1\n" "${ranks[@]}"; }
    # Partials through stdin (`cat`), so thousands of ranks never meet ARG_MAX.
    parts modules | xargs cat | "${NJX}njx-modules" -o "$out/modules.txt"
    parts collectives | xargs cat | "${NJX}njx-collectives" -o "$out/collectives.txt"
    parts source | xargs cat | "${NJX}njx-flamefold" --by source -o "$out/source.folded" --svg "$out/source.svg"
    parts op-name | xargs cat | "${NJX}njx-flamefold" --by op-name -o "$out/op-name.folded" --svg "$out/op-name.svg"
    parts compile | xargs cat | "${NJX}njx-compile-summary" --total -o "$out/compile.txt"
    parts report | xargs cat | "${NJX}njx-report" -o "$out/report.txt" --html "$out/report.html"
    ;;
*)
    echo "njx-slurm: unknown mode $mode (submit)" >&2
    exit 2
    ;;
esac

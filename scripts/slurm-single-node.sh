#!/usr/bin/env bash
# Tests examples/cluster/njx-slurm.sh under a real Slurm on this one machine (issue 13):
# starts munged, slurmctld and slurmd on localhost (Debian 12's slurm-wlm 22.05; the
# recipe of ../shared/notes/slurm-single-node.md), submits the map job array and the
# dependent reduce job over N rank archives, waits, and checks that every reduced answer
# equals the single-process one byte for byte. Stops the daemons it started on exit.
#
# Usage (as root, from anywhere):  scripts/slurm-single-node.sh [RUN_DIR] [TASKS]
#   RUN_DIR  rank archives (default: target/scale/16, made by scripts/bench-scale.sh 16)
#   TASKS    map array tasks (default 4: each takes every 4th archive)
# Installs slurm-wlm and munge with apt-get when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RUN=$(cd "${1:-target/scale/16}" && pwd)
TASKS=${2:-4}
BIN=$ROOT/target/release
[[ $(id -u) == 0 ]] || { echo "slurm-single-node: run as root (daemons, munge key)" >&2; exit 1; }
cargo build --release --quiet --bins

if ! command -v slurmctld > /dev/null || ! command -v munged > /dev/null; then
    apt-get install -y --no-install-recommends slurm-wlm munge > /dev/null
fi

work=$(mktemp -d -t njx-slurm.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
    for f in "$work"/slurmd.pid "$work"/slurmctld.pid "$work"/munged.pid; do
        [[ -f $f ]] && kill "$(cat "$f")" 2> /dev/null || true
    done
    sleep 1
    rm -rf "$work"
}
trap cleanup EXIT

# munge: a key, the daemon as user munge.
mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
if [[ ! -f /etc/munge/munge.key ]]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
fi
chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge
chmod 400 /etc/munge/munge.key
if ! munge -n 2> /dev/null | unmunge > /dev/null 2>&1; then
    su -s /bin/sh munge -c "munged --pid-file=$work/munged.pid" || runuser -u munge -- munged
    sleep 1
fi
munge -n | unmunge > /dev/null

host=$(hostname)
cpus=$(nproc)
mem=$(( $(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo) * 3 / 4 ))
mkdir -p "$work"/{state,spool,log}
conf=$work/slurm.conf
cat > "$conf" <<CONF
ClusterName=njx-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=njx Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
printf 'CgroupPlugin=autodetect\nIgnoreSystemd=yes\n' > "$work/cgroup.conf"
export SLURM_CONF=$conf
slurmctld -f "$conf"
slurmd -f "$conf"
for _ in $(seq 60); do
    sinfo -h -o %T 2> /dev/null | grep -qx idle && break
    sleep 1
done
sinfo -h -o '%P %T %c'

out=$work/out
NJX=$BIN/ NJX_TASKS=$TASKS examples/cluster/njx-slurm.sh submit "$RUN" "$out" | tee "$work/submit.txt"
reduce=$(grep -o 'reduce job [0-9]*' "$work/submit.txt" | awk '{print $3}')
start=$SECONDS
while squeue -h | grep -q .; do
    sleep 2
    (( SECONDS - start < 1800 )) || { echo "slurm-single-node: jobs still queued after 30 min" >&2; exit 1; }
done
state=$(sacct -n -X -j "$reduce" -o State 2> /dev/null | head -1 | tr -d ' ' || true)
echo "map and reduce done in $(( SECONDS - start )) s (reduce job $reduce${state:+: $state})"
for f in modules.txt collectives.txt source.folded op-name.folded compile.txt; do
    [[ -s $out/$f ]] || { echo "FAIL: no $f; logs:" >&2; cat "$out"/reduce-*.log "$out"/parts/map-*.log >&2 || true; exit 1; }
done

# The single-process answers.
cd "$RUN"
ref=$work/ref
mkdir -p "$ref"
"$BIN/njx-modules" rank*.zip -o "$ref/modules.txt" 2> /dev/null
"$BIN/njx-collectives" rank*.zip -o "$ref/collectives.txt" 2> /dev/null
"$BIN/njx-flamefold" --by source rank*.zip -o "$ref/source.folded" 2> /dev/null
"$BIN/njx-flamefold" --by op-name rank*.zip -o "$ref/op-name.folded" 2> /dev/null
"$BIN/njx-export" rank*.zip | "$BIN/njx-ranges" --xla-compile | "$BIN/njx-compile-summary" --total -o "$ref/compile.txt"
fail=0
for f in modules.txt collectives.txt source.folded op-name.folded compile.txt; do
    if cmp -s "$out/$f" "$ref/$f"; then
        echo "equal: $f ($(wc -l < "$ref/$f") lines)"
    else
        echo "DIFFERENT: $f"; diff "$out/$f" "$ref/$f" | head -5; fail=1
    fi
done
exit $fail

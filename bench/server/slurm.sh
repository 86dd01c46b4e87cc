#!/usr/bin/env bash
# The load of run.sh against Slurm 22.05 on this host, for a side-by-side
# table: one slurmctld and one slurmd with 8 fake H100s (character devices
# /dev/fakegpu0..7), default scheduler settings (sched/backfill), no
# accounting database. Needs root and:
#   apt-get install -y --no-install-recommends slurm-wlm munge
#
#   bench/server/slurm.sh [N] [C]     (defaults 2000 and 32)
#   SLURM_GEN=array bench/server/slurm.sh N   (the N jobs as one job array)
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-2000}
C=${2:-32}
for bin in slurmctld slurmd sbatch squeue munged; do
	command -v "$bin" >/dev/null || { echo "$bin not found: apt-get install -y --no-install-recommends slurm-wlm munge" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "run as root (slurmd and fake GPU devices need it)" >&2; exit 1; }
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
for i in $(seq 0 7); do
	[ -e /dev/fakegpu$i ] || mknod /dev/fakegpu$i c 195 $i
done
mkdir -p /run/munge "$work/state" "$work/spool"
chown munge:munge /run/munge
if ! pgrep -u munge munged >/dev/null; then
	runuser -u munge -- munged
	pids+=("$(pgrep -u munge -n munged)")
fi
port=$(( 20000 + RANDOM % 20000 ))
cat >"$work/slurm.conf" <<CONF
ClusterName=corralbench
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MaxArraySize=100001
ReturnToService=2
NodeName=node1 NodeAddr=127.0.0.1 CPUs=64 RealMemory=100000 Gres=gpu:h100:8 State=UNKNOWN
PartitionName=main Nodes=node1 Default=YES MaxTime=INFINITE State=UP
CONF
printf 'AutoDetect=off\nNodeName=node1 Name=gpu Type=h100 File=/dev/fakegpu[0-7]\n' >"$work/gres.conf"
printf 'CgroupPlugin=cgroup/v1\n' >"$work/cgroup.conf"
export SLURM_CONF=$work/slurm.conf
slurmctld -D -i >"$work/ctld.out" 2>&1 &
pids+=($!)
sleep 2
slurmd -D -N node1 >"$work/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 60); do
	sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed)' && break
	sleep 1
done
sinfo -h -o '%T' | grep -qE '^(idle|mixed)' || { cat "$work/slurmctld.log" "$work/slurmd.log" >&2; exit 1; }
if [ "${SLURM_GEN:-}" = mixed ]; then # the mixed stream of mixed.sh
	go build -o "$work/mixed" ./bench/server/mixed
	mkdir -p "$work/stamps"
	(cd "$work" && ./mixed -target slurm -dir "$work/stamps")
	exit 0
fi
go build -o "$work/slurmgen" ./bench/server/slurmgen
echo "| Slurm $(sinfo -V | cut -d' ' -f2) load test | $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs |"
echo "|---|---|"
array=()
[ "${SLURM_GEN:-}" = array ] && array=(-array)
(cd "$work" && ./slurmgen -n "$N" -c "$C" "${array[@]}")

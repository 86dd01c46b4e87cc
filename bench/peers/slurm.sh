#!/usr/bin/env bash
# The workload of run.sh through Slurm 22.05 on this host: one slurmctld
# and 8 slurmd (fake nodes n0..n7, 8 fake H100s each as character devices
# /dev/fakegpu0..63), select/cons_tres with typed GPU GRES, sched/backfill
# (its interval and resolution shortened to a second, as the replay
# compresses time 30-fold), priority/multifactor with the age factor and
# each job's priority as a negative nice (fair share needs slurmdbd, which
# this rig does not run), and job completions logged to a file, from which
# slurmreplay writes real-slurm.csv and real-slurm-holds.csv. Needs root and:
#   apt-get install -y --no-install-recommends slurm-wlm munge
#
#   bench/peers/slurm.sh                      # then bench/peers/run.sh compares
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
NODES=8
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
for i in $(seq 0 $((NODES * 8 - 1))); do
	[ -e /dev/fakegpu$i ] || mknod /dev/fakegpu$i c 195 $i
done
mkdir -p /run/munge "$work/state" "$work/spool"
chown munge:munge /run/munge
if ! pgrep -u munge munged >/dev/null; then
	runuser -u munge -- munged
fi
# below the ephemeral range (32768 and up), where a client socket may sit
port=$((10000 + RANDOM % 20000 / 10 * 10))
{
	cat <<CONF
ClusterName=corralpeers
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd-%n.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,bf_resolution=1,bf_window=1440,bf_continue
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityMaxAge=00:10:00
PriorityCalcPeriod=1
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$work/jobcomp.log
MpiDefault=none
ReturnToService=2
PartitionName=main Nodes=n[0-$((NODES - 1))] Default=YES MaxTime=INFINITE State=UP
CONF
	for i in $(seq 0 $((NODES - 1))); do
		echo "NodeName=n$i NodeAddr=127.0.0.1 Port=$((port + 1 + i)) CPUs=192 RealMemory=2000000 Gres=gpu:h100:8 State=UNKNOWN"
	done
} >"$work/slurm.conf"
{
	echo "AutoDetect=off"
	for i in $(seq 0 $((NODES - 1))); do
		echo "NodeName=n$i Name=gpu Type=h100 File=/dev/fakegpu[$((i * 8))-$((i * 8 + 7))]"
	done
} >"$work/gres.conf"
printf 'CgroupPlugin=cgroup/v1\n' >"$work/cgroup.conf"
export SLURM_CONF=$work/slurm.conf
mkdir -p "$work/spool"
for i in $(seq 0 $((NODES - 1))); do mkdir -p "$work/spool/n$i"; done
slurmctld -D -i >"$work/ctld.out" 2>&1 &
pids+=($!)
sleep 2
for i in $(seq 0 $((NODES - 1))); do
	slurmd -D -N "n$i" >"$work/slurmd-n$i.out" 2>&1 &
	pids+=($!)
done
for _ in $(seq 60); do
	[ "$(sinfo -h -N -t idle -o '%N' 2>/dev/null | wc -l)" -ge "$NODES" ] && break
	sleep 1
done
[ "$(sinfo -h -N -t idle -o '%N' | wc -l)" -ge "$NODES" ] || { sinfo; tail -20 "$work/slurmctld.log" >&2; exit 1; }
echo "# Slurm $(sinfo -V | cut -d' ' -f2), $NODES nodes of 8 fake H100s, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$GO" build -o "$work/slurmreplay" ./bench/peers/slurmreplay
# shellcheck disable=SC2086
"$work/slurmreplay" -jobs 150 -span 150m -speedup 30 -seed 1 -jobcomp "$work/jobcomp.log" -out bench/peers/real-slurm.csv \
	-holds bench/peers/real-slurm-holds.csv ${ARGS:-}
echo "# wrote bench/peers/real-slurm.csv and real-slurm-holds.csv; load after: $(cut -d' ' -f1-3 /proc/loadavg)"

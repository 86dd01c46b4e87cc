#!/usr/bin/env bash
# The workload of run.sh through Slurm 22.05 on this host: one slurmctld
# and 8 slurmd (fake nodes n0..n7, 8 fake H100s each as character devices
# /dev/fakegpu0..63), select/cons_tres with typed GPU GRES, sched/backfill
# (its interval and resolution shortened to a second, as the replay
# compresses time 30-fold), priority/multifactor with fair share, age, job
# size and QOS at the weights of internal/sim's slurm-like model and its
# half-life and maximum age divided by the compression, accounting in
# slurmdbd on a private MariaDB (an account per tenant with its share of
# the GPU-hours as its fair share, GPU-hours billed; a QOS per priority),
# and job completions logged to a file, from which slurmreplay writes
# real-slurm.csv and real-slurm-holds.csv. Needs root; installs what is
# missing of Debian's slurm-wlm, slurmdbd, munge and mariadb-server.
#
#   bench/peers/slurm.sh                      # then bench/peers/run.sh compares
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
NODES=8
SPEEDUP=30
[ "$(id -u)" = 0 ] || { echo "run as root (slurmd and fake GPU devices need it)" >&2; exit 1; }
bins="slurmctld slurmd slurmdbd sacctmgr sbatch squeue munged mariadbd mariadb-install-db mysql"
for bin in $bins; do
	command -v "$bin" >/dev/null && continue
	echo "# $bin not found: installing Debian's slurm-wlm, slurmdbd, munge and mariadb-server" >&2
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm slurmdbd munge mariadb-server >&2
	break
done
for bin in $bins; do
	command -v "$bin" >/dev/null || { echo "$bin not found after installing" >&2; exit 1; }
done
work=$(mktemp -d)
pids=()
cleanup() {
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; wait "${pids[i]}" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
# waitfor DESCRIPTION COMMAND...: retry COMMAND for up to a minute.
waitfor() {
	local what=$1
	shift
	for _ in $(seq 60); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 1
	done
	echo "$what did not come up" >&2
	return 1
}
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
dbport=$((port + 9)) dbdport=$((port + 10 + NODES))
# The model's priority/multifactor times, in real time.
scaled() { date -u -d "@$(($1 / SPEEDUP))" +%H:%M:%S; }
week=$((7 * 24 * 3600))

# Accounting: a private MariaDB for slurmdbd, gone with the run.
mariadb-install-db --user=root --datadir="$work/db" --auth-root-authentication-method=normal >"$work/db-install.log" 2>&1
mariadbd --user=root --datadir="$work/db" --socket="$work/db.sock" --port=$dbport --bind-address=127.0.0.1 \
	--skip-name-resolve --pid-file="$work/db.pid" --log-error="$work/db.log" &
pids+=($!)
waitfor MariaDB mysql --socket="$work/db.sock" -u root -e "SELECT 1"
mysql --socket="$work/db.sock" -u root -e "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'corral'; GRANT ALL ON *.* TO 'slurm'@'127.0.0.1';"
cat >"$work/slurmdbd.conf" <<CONF
AuthType=auth/munge
DbdHost=localhost
DbdPort=$dbdport
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$dbport
StorageUser=slurm
StoragePass=corral
StorageLoc=slurm_acct_db
PidFile=$work/slurmdbd.pid
LogFile=$work/slurmdbd.log
CONF
chmod 600 "$work/slurmdbd.conf"
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
PriorityWeightFairshare=10000
PriorityWeightAge=1000
PriorityWeightJobSize=1000
PriorityWeightQOS=1000
PriorityDecayHalfLife=$(scaled $week)
PriorityMaxAge=$(scaled $week)
PriorityCalcPeriod=1
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$dbdport
AccountingStorageEnforce=associations,qos
AccountingStorageTRES=gres/gpu
JobCompType=jobcomp/filetxt
JobCompLoc=$work/jobcomp.log
MpiDefault=none
ReturnToService=2
PartitionName=main Nodes=n[0-$((NODES - 1))] Default=YES MaxTime=INFINITE State=UP TRESBillingWeights=GRES/gpu=1.0
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
"$GO" build -o "$work/slurmreplay" ./bench/peers/slurmreplay
slurmdbd -D >"$work/dbd.out" 2>&1 &
pids+=($!)
waitfor slurmdbd sacctmgr -n list cluster
sacctmgr -i add cluster corralpeers >/dev/null
# An account per tenant, its fair share its share of the GPU-hours; a QOS
# per priority level, its priority the level (the QOS factor is it over
# the highest).
accounts=()
while read -r tenant share; do
	sacctmgr -i add account "$tenant" fairshare="$share" >/dev/null
	accounts+=("$tenant")
done < <("$work/slurmreplay" -shares ${ARGS:-})
for p in 0 1 2; do sacctmgr -i add qos "p$p" priority=$p >/dev/null; done
sacctmgr -i add user root account="$(IFS=,; echo "${accounts[*]}")" qos=normal,p0,p1,p2 >/dev/null
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
sshare -a -o Account,User,RawShares,NormShares >&2
# shellcheck disable=SC2086
"$work/slurmreplay" -jobs 150 -span 150m -speedup $SPEEDUP -seed 1 -qos -jobcomp "$work/jobcomp.log" -out bench/peers/real-slurm.csv \
	-holds bench/peers/real-slurm-holds.csv ${ARGS:-}
echo "# wrote bench/peers/real-slurm.csv and real-slurm-holds.csv; load after: $(cut -d' ' -f1-3 /proc/loadavg)"

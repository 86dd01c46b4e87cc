#!/usr/bin/env bash
# Replays one synthetic workload (peers.Synthetic: 150 jobs of two tenants
# over 150 simulated minutes, 1 to 16 GPUs, gangs of two 8-GPU nodes) on 8
# fake nodes of 8 H100 GPUs, 30 simulated seconds per real second, under
# the upstream kube-scheduler packing GPUs, Kueue v0.17.0 in front of it,
# and corral, each on a fresh control plane (kube-apiserver,
# kube-controller-manager, KWOK); then under each one's model in
# internal/sim; and compares them. Writes real-*.csv and model-*.csv (jobs
# files with each job's start and end) and results.json next to this
# script; with real-slurm.csv from slurm.sh there, the table again with
# Slurm beside them, which RESULTS.md quotes. About 25 minutes on 2 cores.
#
#   bench/peers/run.sh
#   ARGS="-jobs 20 -span 20m -speedup 60" bench/peers/run.sh   # a quick look
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
bash scripts/deps/10-kube.sh
bash scripts/deps/30-peers.sh
echo "# $(uname -srm), $(nproc) CPUs, $("$GO" version)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
BIN=$(mktemp -d)/peers-bench
"$GO" build -o "$BIN" ./bench/peers
# shellcheck disable=SC2086
"$BIN" -jobs 150 -span 150m -nodes 8 -speedup 30 -seed 1 -out bench/peers ${ARGS:-}
# With Slurm's replay (slurm.sh, as root) beside them: the table of RESULTS.md.
if [ -e bench/peers/real-slurm.csv ]; then
	echo
	# shellcheck disable=SC2086
	"$BIN" -jobs 150 -span 150m -nodes 8 -speedup 30 -seed 1 -out bench/peers -reuse \
		-schedulers kube-packed,kueue,corral,slurm ${ARGS:-}
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

#!/usr/bin/env bash
# Drain at scale: every pod exists, then the scheduler starts; timed from
# its first binding to its last. The upstream kube-scheduler configured for
# GPUs as its documentation gives (kube-packed: NodeResourcesFit
# MostAllocated weighting nvidia.com/gpu), corral, and the API server's own
# ceiling (a client binding placements computed beforehand, from 16
# workers), each scheduler with a client of its own at QPS 1000, burst
# 2000, on one API server on this machine. Two workloads at each size:
#   results-scale-trace-N.json  the first 7,000 GPU pods of the openb trace
#                               and 50 pod groups
#   results-scale-plain-N.json  plain 1-GPU pods, 4 per node, and 50 groups
# at N = 1000 and 5000 nodes of 8 H100s (racks of 16). RESULTS.md gives
# each as a share of the ceiling. Needs the control plane of
# scripts/deps/10-kube.sh. Run from anywhere.
#
#   bench/kube/run_scale.sh
#   SIZES=1000 bench/kube/run_scale.sh          # one size
#   SCHEDULERS=corral,ceiling bench/kube/run_scale.sh
#   SIZES=5000 WORKLOADS=plain bench/kube/run_scale.sh
#   SUFFIX=-r2 SCHEDULERS=corral,ceiling bench/kube/run_scale.sh
#                       # a repeat, to results-scale-{trace,plain}-N-r2.json
#   MODE=arrival bench/kube/run_scale.sh
#                       # the scheduler runs while the pods arrive (16
#                       # clients create them), timed from the first
#                       # pod's creation, to results-scale-arrival-*.json;
#                       # the ceiling always drains
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
bash scripts/deps/10-kube.sh
echo "# $(uname -srm), $(nproc) CPUs, $("$GO" version), $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
BIN=$(mktemp -d)/kube-bench
"$GO" build -o "$BIN" ./bench/kube
S=${SCHEDULERS:-kube-packed,corral,ceiling}
for n in ${SIZES:-1000 5000}; do
	racks=$(((n + 15) / 16))
	echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
	for w in ${WORKLOADS:-trace plain}; do
		case $w in
		trace) args=(-pods 7000) ;;
		plain) args=(-plain -pods $((4 * n))) ;;
		*) echo "unknown workload $w (want trace or plain)" >&2 && exit 2 ;;
		esac
		case ${MODE:-drain} in
		drain) mode=(-drain) out=bench/kube/results-scale-$w-$n${SUFFIX:-}.json ;;
		arrival) mode=() out=bench/kube/results-scale-arrival-$w-$n${SUFFIX:-}.json ;;
		*) echo "unknown MODE $MODE (want drain or arrival)" >&2 && exit 2 ;;
		esac
		"$BIN" -nodes "$n" -racks "$racks" "${args[@]}" -groups 50 -schedulers "$S" "${mode[@]}" -json "$out"
		echo
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

#!/usr/bin/env bash
# Throughput, fairly: the upstream kube-scheduler as unconfigured
# (kube-scheduler) and configured to pack GPUs (kube-packed: NodeResourcesFit
# MostAllocated weighting nvidia.com/gpu), and corral, each with a client of
# its own at the same QPS (1000, burst 2000), beside the API server's own
# ceiling (a client binding placements computed beforehand, first fit, as
# fast as it can from 16 workers, unthrottled). Two tests on the first 5,000
# GPU pods of the openb trace and 50 pod groups, 500 nodes of 8 H100s:
#   results-fair-arrival.json  the scheduler runs, the pods arrive (16 creators)
#   results-fair-drain.json    every pod exists, then the scheduler starts;
#                              timed from its first binding to its last
# RESULTS.md gives each as a share of the ceiling. Needs the control plane
# of scripts/deps/10-kube.sh. Run from anywhere.
#
#   bench/kube/run_fair.sh
#   ARGS="-nodes 50 -pods 500 -groups 10" bench/kube/run_fair.sh   # a quick look
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
bash scripts/deps/10-kube.sh
echo "# $(uname -srm), $(nproc) CPUs, $("$GO" version)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
BIN=$(mktemp -d)/kube-bench
"$GO" build -o "$BIN" ./bench/kube
S=kube-scheduler,kube-packed,corral,ceiling
# shellcheck disable=SC2086
"$BIN" -pods 5000 -groups 50 -schedulers "$S" -json bench/kube/results-fair-arrival.json ${ARGS:-}
echo
# shellcheck disable=SC2086
"$BIN" -pods 5000 -groups 50 -schedulers "$S" -drain -json bench/kube/results-fair-drain.json ${ARGS:-}
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

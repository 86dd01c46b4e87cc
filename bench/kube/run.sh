#!/usr/bin/env bash
# Runs the upstream kube-scheduler and corral against one real API server
# (500 nodes of 8 H100s in 50 racks) on two workloads from the Alibaba openb
# trace, each with 50 pod groups created among the single pods:
#   results.json        the first 5,000 GPU pods (more than the fleet holds)
#   results-fill95.json as many pods as ask for 95% of the GPUs
#   results-gangs.json  50 groups of 4 pods of 8 GPUs, and pods up to 100%
# Needs the control plane of scripts/deps/10-kube.sh. Run from anywhere.
#
#   bench/kube/run.sh
#   ARGS="-nodes 50 -pods 500 -groups 10" bench/kube/run.sh   # a quick look
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
bash scripts/deps/10-kube.sh
echo "# $(uname -srm), $(nproc) CPUs, $("$GO" version)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
"$GO" build -o /tmp/corral-kube-bench ./bench/kube
# shellcheck disable=SC2086
/tmp/corral-kube-bench -pods 5000 -groups 50 -json bench/kube/results.json ${ARGS:-}
echo
# shellcheck disable=SC2086
/tmp/corral-kube-bench -fill 0.95 -groups 50 -json bench/kube/results-fill95.json ${ARGS:-}
echo
# Big gangs on a fleet the work fills exactly: 50 groups of 4 pods of 8 GPUs.
# shellcheck disable=SC2086
/tmp/corral-kube-bench -fill 1.0 -groups 50 -group-pods 4 -group-gpus 8 -json bench/kube/results-gangs.json ${ARGS:-}

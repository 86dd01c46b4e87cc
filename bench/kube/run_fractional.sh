#!/usr/bin/env bash
# Fractional pods kept fractional: the first GPU pods of the openb trace up
# to 95% of 500 nodes of 8 H100s with 50 pod groups (as results-fill95.json),
# but the trace's fractional pods ask for time-sliced replicas of one GPU
# (10 a GPU, NVIDIA device plugin's renamed nvidia.com/gpu.shared, rounded
# up) on the nodes that offer them, in proportion to the GPU they ask for.
# The upstream kube-scheduler runs its default profile and the documented
# MostAllocated profile weighting GPUs (kube-packed); then corral. Writes
# results-fractional.json and, with what it prints, results-fractional.txt.
# Needs the control plane of
# scripts/deps/10-kube.sh. Run from anywhere; about 10 minutes on 2 cores.
#
#   bench/kube/run_fractional.sh
#   ARGS="-nodes 50" bench/kube/run_fractional.sh   # a quick look
set -euo pipefail
cd "$(dirname "$0")/../.."
exec > >(tee bench/kube/results-fractional.txt)
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
bash scripts/deps/10-kube.sh
echo "# $(uname -srm), $(nproc) CPUs, $("$GO" version), at $(git rev-parse --short HEAD)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
"$GO" build -o /tmp/corral-kube-bench ./bench/kube
# shellcheck disable=SC2086
/tmp/corral-kube-bench -fill 0.95 -groups 50 -replicas 10 -schedulers kube-scheduler,kube-packed,corral \
  -json bench/kube/results-fractional.json ${ARGS:-}

#!/usr/bin/env bash
# Fractional pods kept fractional by DRA consumable capacity (KEP-5075):
# the workload of run_fractional.sh (the first GPU pods of the openb trace
# up to 95% of 500 nodes of 8 H100s, with 50 pod groups), but each of the
# trace's fractional pods claims its share of one GPU's memory (a
# ResourceClaim for one device asking part of its "memory" capacity, in
# thousandths, rounded up to a MiB) on the nodes whose GPUs a DRA driver
# publishes for several allocations (the fleet's part in proportion to
# the GPU they ask for). The upstream kube-scheduler runs its default
# profile and the MostAllocated profile weighting GPUs (kube-packed); then
# corral. Both allocate the claims with the upstream allocator. Writes
# results-dra.json and, with what it prints, results-dra.txt. Needs the
# control plane of scripts/deps/10-kube.sh. About 10 minutes on 2 cores.
#
#   bench/kube/run_dra.sh
#   ARGS="-nodes 50 -groups 5" bench/kube/run_dra.sh   # a quick look
set -euo pipefail
cd "$(dirname "$0")/../.."
exec > >(tee bench/kube/results-dra.txt)
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
bash scripts/deps/10-kube.sh
echo "# $(uname -srm), $(nproc) CPUs, $("$GO" version), at $(git rev-parse --short HEAD)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
"$GO" build -o /tmp/corral-kube-bench ./bench/kube
# shellcheck disable=SC2086
/tmp/corral-kube-bench -fill 0.95 -groups 50 -dra -schedulers kube-scheduler,kube-packed,corral \
  -json bench/kube/results-dra.json ${ARGS:-}

#!/usr/bin/env bash
# Pods bound per second by corral kube-scheduler's client set up in cluster
# (the deploy ServiceAccount's token and CA in a directory, the API
# server's address in KUBERNETES_SERVICE_HOST/PORT, as Kubernetes gives a
# pod) and with a kubeconfig, on one real API server: N 1-GPU pods on N/8
# nodes of 8 GPUs, created before the scheduler starts, timed from its
# caches' sync to the last binding; in cluster, kubeconfig, kubeconfig, in
# cluster. It fails when the in-cluster rate is below 80% of the other.
# Needs the control plane of scripts/deps/10-kube.sh.
#
#   bench/kube/bind_rate.sh          # 1,000 pods
#   PODS=200 bench/kube/bind_rate.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
echo "# $(uname -srm), $(nproc) CPUs, $("$GO" version)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
CORRAL_INTEGRATION=1 CORRAL_BIND_RATE_PODS=${PODS:-1000} "$GO" test -count=1 -timeout 30m \
	-run '^TestInClusterBindRateMatchesKubeconfig$' -v ./internal/kube/ 2>&1 | grep -E '^(bind-rate|--- |ok|FAIL|PASS)'

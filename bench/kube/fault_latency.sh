#!/usr/bin/env bash
# Time from a node fault to corral kube-scheduler's decision, on one real
# API server with the scheduler running as deployed (cycles woken by
# changes, at least every 2 s): per trial a 2-pod gang of 8-GPU pods packed
# in a rack of its own; one node under it is made NotReady (its status
# written as a node lifecycle controller would); timed from that write to
# the scheduler's fault record (the decision) and to the moved pod seen
# bound on the rack's spare, or, without a spare, to the gang's copies
# created (requeued). Needs the control plane of scripts/deps/10-kube.sh.
#
#   bench/kube/fault_latency.sh            # 20 trials each
#   TRIALS=50 bench/kube/fault_latency.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
echo "# $(uname -srm), $(nproc) CPUs, $("$GO" version)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
CORRAL_INTEGRATION=1 CORRAL_FAULT_TRIALS=${TRIALS:-20} "$GO" test -count=1 -timeout 30m \
	-run '^TestFaultToDecisionLatency$' -v ./internal/kube/ 2>&1 | grep -E '^(fault-latency|--- |ok|FAIL|PASS)'

#!/usr/bin/env bash
# Replays the generated four-tenant workload (256 synthetic nodes, 14 days,
# seed 1) under corral and every model of another system, each configured
# at its documented best for GPU clusters (corral sim -h lists them and the
# pages they follow), beside the earlier models kept as worst cases. Writes
# the tables (peers-*.txt) and summaries (peers-*.json) next to this
# script: "Peers at their documented best" in RESULTS.md quotes them.
# Run from anywhere; needs Go 1.26. About a minute on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
OUT=bench/sim
BIN=$(mktemp -d)/corral
"$GO" build -o "$BIN" ./cmd/corral
POLICIES=corral,slurm-like,kueue-like,kube-default,kube-packed,volcano-like,kai-like,slurm-exclusive,kueue-strict

for load in 0.8 0.95; do
  echo "# corral sim --nodes 256 --days 14 --load $load --seed 1 --policies $POLICIES" >"$OUT/peers-$load.txt"
  "$BIN" sim --nodes 256 --days 14 --load "$load" --seed 1 --policies "$POLICIES" \
    --json "$OUT/peers-$load.json" | tee -a "$OUT/peers-$load.txt"
done

FAULTS="--spot-share 0.25 --spot-rate 0.01 --mtbf 2000h"
echo "# corral sim --nodes 256 --days 14 --load 0.8 --seed 1 $FAULTS --policies $POLICIES" >"$OUT/peers-faults-0.8.txt"
# shellcheck disable=SC2086 # FAULTS is several flags
"$BIN" sim --nodes 256 --days 14 --load 0.8 --seed 1 $FAULTS --policies "$POLICIES" \
  --json "$OUT/peers-faults-0.8.json" | tee -a "$OUT/peers-faults-0.8.txt"

#!/usr/bin/env bash
# Replays the workloads of bench/sim/RESULTS.md under every policy and
# writes the tables (.txt) and summaries (.json) next to this script, then
# times corral alone on 100,000 jobs and 2,000 nodes (speed.txt).
# Run from anywhere; needs Go 1.26. The openb part reads the public trace
# from $DATA (default ../shared/data/alibaba-gpu-v2023) and is skipped
# when it is absent. About 10 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
DATA=${DATA:-../shared/data/alibaba-gpu-v2023}
OUT=bench/sim
BIN=$(mktemp -d)/corral
"$GO" build -o "$BIN" ./cmd/corral

for load in 0.8 0.95; do
  "$BIN" sim --nodes 256 --days 14 --load "$load" --seed 1 --json "$OUT/generated-$load.json" \
    | tee "$OUT/generated-$load.txt"
done

"$BIN" sim --nodes 256 --days 14 --load 0.8 --seed 1 --spot-share 0.25 --spot-rate 0.01 --mtbf 2000h \
  --json "$OUT/faults-0.8.json" | tee "$OUT/faults-0.8.txt"

if [ -f "$DATA/openb_pod_list_default.csv" ]; then
  for speedup in 1 4; do
    "$BIN" sim --workload openb --openb-pods "$DATA/openb_pod_list_default.csv" \
      --openb-nodes "$DATA/openb_node_list_gpu_node.csv" --openb-node-share 0.02 \
      --openb-speedup "$speedup" --json "$OUT/openb-x$speedup.json" | tee "$OUT/openb-x$speedup.txt"
  done
fi

TIMEFORMAT='wall seconds: %R'
{
  echo "# $(uname -srm), $(nproc) CPUs, $("$GO" version)"
  echo "# corral sim --nodes 2000 --days 72 --load 0.85 --policies corral"
  time "$BIN" sim --nodes 2000 --days 72 --load 0.85 --policies corral --json "$OUT/speed.json"
} 2>&1 | tee "$OUT/speed.txt"

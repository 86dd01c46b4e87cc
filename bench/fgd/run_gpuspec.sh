#!/usr/bin/env bash
# Model constraints: derives gpu_spec variants of the default trace (10, 20
# and 33% of GPU pods restricted to one or two GPU models) and runs the
# packing benchmark on them. Writes gpuspec.json, gpuspec.svg and
# gpuspec.txt here; the derived CSVs go to a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
DATA=${DATA:-../shared/data/alibaba-gpu-v2023}
OUT=bench/fgd
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

pods=()
for share in 0.1 0.2 0.33; do
  pods+=("$(go run ./bench/fgd/gpuspec -nodes "$DATA/openb_node_list_gpu_node.csv" \
    -pods "$DATA/openb_pod_list_default.csv" -share "$share" -out "$TMP")")
done
go build -o /tmp/corral-bench ./cmd/corral
/tmp/corral-bench bench fgd --nodes "$DATA/openb_node_list_gpu_node.csv" \
  --pods "$(IFS=,; echo "${pods[*]}")" --seeds 42-51 \
  --json "$OUT/gpuspec.json" --svg "$OUT/gpuspec.svg" | tee "$OUT/gpuspec.txt"

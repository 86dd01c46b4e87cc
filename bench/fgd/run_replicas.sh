#!/usr/bin/env bash
# What rounding GPU shares up to time-sliced replicas costs: on Kubernetes a
# pod can only ask for whole replicas of a time-sliced GPU (the NVIDIA
# device plugin's sharing), so a 0.3-GPU pod on GPUs sliced in four asks
# for 0.5. This runs the shared-GPU traces with each pod's own milli
# (--replicas 0) and rounded up to quarters and to tenths, under fgd and
# live (what corral's faces run). Needs the traces in
# ../shared/data/alibaba-gpu-v2023 (or DATA=...). Writes replicas/*.json
# and replicas/table.txt here.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
export CGO_CFLAGS="${CGO_CFLAGS:--Wno-deprecated-declarations}"
DATA=${DATA:-../shared/data/alibaba-gpu-v2023}
OUT=bench/fgd/replicas
pods=$(ls "$DATA"/openb_pod_list_{default,gpushare40,gpushare100}.csv | paste -sd, -)
go build -o /tmp/corral-bench-replicas ./cmd/corral
: > "$OUT/table.txt"
for r in 0 4 10; do
  echo "== --replicas $r" | tee -a "$OUT/table.txt"
  /tmp/corral-bench-replicas bench fgd --nodes "$DATA/openb_node_list_gpu_node.csv" --pods "$pods" \
    --policies fgd,live --seeds 42-51 --bound=false --quiet --replicas "$r" \
    --json "$OUT/replicas$r.json" | tee -a "$OUT/table.txt"
done

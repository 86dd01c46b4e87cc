#!/usr/bin/env bash
# The live path beside the lab policies: every openb trace (19 pod files) x
# {fgd, corral, corral-online, live} x seeds 42-51. `live` places each pod
# through gang.State.Place, the call corral server and corral kube-scheduler
# make. Needs the traces in ../shared/data/alibaba-gpu-v2023 (or DATA=...).
# Writes live.json and live.txt here.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
export CGO_CFLAGS="${CGO_CFLAGS:--Wno-deprecated-declarations}"
DATA=${DATA:-../shared/data/alibaba-gpu-v2023}
OUT=bench/fgd
pods=$(ls "$DATA"/openb_pod_list_*.csv | paste -sd, -)

go build -o /tmp/corral-bench-live ./cmd/corral
start=$(date +%s)
/tmp/corral-bench-live bench fgd --nodes "$DATA/openb_node_list_gpu_node.csv" --pods "$pods" \
  --policies fgd,corral,corral-online,live --seeds 42-51 --bound=false --quiet \
  --json "$OUT/live.json" | tee "$OUT/live.txt"
end=$(date +%s)
echo "grid wall time: $((end - start)) s on $(nproc) cores" | tee -a "$OUT/live.txt"

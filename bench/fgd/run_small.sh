#!/usr/bin/env bash
# Small fleets drawn from the trace: the deployed policy (live) against fgd
# where a shared box or a 16-node cluster runs. Draws DRAWS fleets of NODES
# GPU nodes from openb_node_list_gpu_node.csv (draw d picks its nodes with
# awk's srand(d), so every draw is the same on every machine), then runs
# corral bench fgd with fgd and live on the default trace, seeds 42-51,
# on each. Needs the traces in ../shared/data/alibaba-gpu-v2023 (or
# DATA=...). Writes small.txt here, and small-<d>.json per draw.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
DATA=${DATA:-../shared/data/alibaba-gpu-v2023}
NODES=${NODES:-16}
DRAWS=${DRAWS:-5}
OUT=bench/fgd
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/corral" ./cmd/corral
: >"$OUT/small.txt"
for d in $(seq 1 "$DRAWS"); do
  fleet="$tmp/fleet-$d.csv"
  head -1 "$DATA/openb_node_list_gpu_node.csv" >"$fleet"
  tail -n +2 "$DATA/openb_node_list_gpu_node.csv" |
    awk -v seed="$d" 'BEGIN { srand(seed) } { print rand() "\t" $0 }' |
    sort -k1,1 | awk -v n="$NODES" 'NR <= n' | cut -f2- | sort >>"$fleet"
  {
    echo "== draw $d: $NODES nodes, $(tail -n +2 "$fleet" | awk -F, '{ g += $4; m[$5]++ } END { printf "%d GPUs;", g; for (k in m) printf " %s x%d", k, m[k]; print "" }')"
    "$tmp/corral" bench fgd --nodes "$fleet" --pods "$DATA/openb_pod_list_default.csv" \
      --policies fgd,live --seeds 42-51 --bound=false --quiet --timing=false --json "$OUT/small-$d.json"
  } | tee -a "$OUT/small.txt"
done

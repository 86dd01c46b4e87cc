#!/usr/bin/env bash
# Small fleets drawn from the trace: the deployed policy (live) against fgd
# where a shared box or a 16-node cluster runs. Draws DRAWS fleets of NODES
# GPU nodes from openb_node_list_gpu_node.csv (draw d picks its nodes with
# awk's srand(d), so every draw is the same on every machine), then runs
# corral bench fgd with fgd, corral and live on the default trace, seeds
# 42-51, on each, and ends with the mean of each policy's difference from
# fgd at x = 100. Needs the traces in ../shared/data/alibaba-gpu-v2023 (or
# DATA=...). Writes small.txt here, and small-<d>.json per draw.
#
#   bench/fgd/run_small.sh                                # draws 1-5
#   FIRST=6 DRAWS=10 TXT=small-heldout.txt bench/fgd/run_small.sh  # draws 6-15
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
DATA=${DATA:-../shared/data/alibaba-gpu-v2023}
NODES=${NODES:-16}
DRAWS=${DRAWS:-5}
FIRST=${FIRST:-1}
TXT=${TXT:-small.txt}
OUT=bench/fgd
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/corral" ./cmd/corral
: >"$OUT/$TXT"
for d in $(seq "$FIRST" $((FIRST + DRAWS - 1))); do
  fleet="$tmp/fleet-$d.csv"
  head -1 "$DATA/openb_node_list_gpu_node.csv" >"$fleet"
  tail -n +2 "$DATA/openb_node_list_gpu_node.csv" |
    awk -v seed="$d" 'BEGIN { srand(seed) } { print rand() "\t" $0 }' |
    sort -k1,1 | awk -v n="$NODES" 'NR <= n' | cut -f2- | sort >>"$fleet"
  {
    echo "== draw $d: $NODES nodes, $(tail -n +2 "$fleet" | awk -F, '{ g += $4; m[$5]++ } END { printf "%d GPUs;", g; for (k in m) printf " %s x%d", k, m[k]; print "" }')"
    "$tmp/corral" bench fgd --nodes "$fleet" --pods "$DATA/openb_pod_list_default.csv" \
      --policies fgd,corral,live --seeds 42-51 --bound=false --quiet --timing=false --json "$OUT/small-$d.json"
  } | tee -a "$OUT/$TXT"
done
# The "vs fgd @100" column of each policy's row, averaged over the draws.
awk '$1 ~ /^(corral|live)$/ && $(NF-1) ~ /^[-+]?[0-9.]+$/ { s[$1] += $(NF-1); n[$1]++; if ($(NF-1) + 0 <= 0) w[$1]++ }
  END { for (p in s) printf "mean of %s - fgd at x = 100 over %d draws: %+.2f (at or below fgd on %d)\n", p, n[p], s[p] / n[p], w[p] }' \
  "$OUT/$TXT" | sort | tee -a "$OUT/$TXT"

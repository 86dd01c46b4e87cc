#!/usr/bin/env bash
# Reproduces bench/fgd/RESULTS.md: the full packing benchmark on every openb
# trace (19 pod files x 9 policies x seeds 42-51), the LP bound, and the run
# speed benchmark. Needs the traces in ../shared/data/alibaba-gpu-v2023 (or
# DATA=...). Writes results.json, curves.svg, table.txt and speed.txt here.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
DATA=${DATA:-../shared/data/alibaba-gpu-v2023}
OUT=bench/fgd
pods=$(ls "$DATA"/openb_pod_list_*.csv | paste -sd, -)

go build -o /tmp/corral-bench ./cmd/corral
start=$(date +%s)
/tmp/corral-bench bench fgd --nodes "$DATA/openb_node_list_gpu_node.csv" --pods "$pods" \
  --seeds 42-51 --json "$OUT/results.json" --svg "$OUT/curves.svg" | tee "$OUT/table.txt"
end=$(date +%s)
echo "grid wall time: $((end - start)) s on $(nproc) cores" | tee -a "$OUT/table.txt"

# Speed: seven single runs per policy; the median s/run is what counts.
go test -run '^$' -bench 'BenchmarkRun/default' -benchtime 1x -count 7 ./internal/packbench | tee "$OUT/speed.txt"
for name in $(awk '/s\/run/ {print $1}' "$OUT/speed.txt" | sort -u); do
  awk -v n="$name" '$1 == n {print $(NF-1)}' "$OUT/speed.txt" | sort -g |
    awk -v n="$name" '{v[NR] = $1} END {printf "median %s %.3f s/run over %d runs\n", n, v[int((NR + 1) / 2)], NR}'
done | tee -a "$OUT/speed.txt"

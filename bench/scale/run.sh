#!/usr/bin/env bash
# Runs corral bench scale at the issue's size (10,000 nodes of 8 GPUs) and
# writes bench/scale/results.json; then smaller points (2,000 and 5,000
# nodes) whose JSON goes to $POINTS_DIR (default: a temporary directory).
# Run from anywhere; it changes to the repository root. Needs Go 1.26.
#
#   bench/scale/run.sh                 # 10,000 nodes, then 2,000 and 5,000
#   POINTS="" bench/scale/run.sh       # only the 10,000-node run
#   SEED=2 bench/scale/run.sh          # another seed
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
SEED=${SEED:-1}
POINTS=${POINTS-"2000 5000"}
POINTS_DIR=${POINTS_DIR:-$(mktemp -d)}
mkdir -p "$POINTS_DIR"

echo "# $(uname -srm), $(nproc) CPUs, $("$GO" version)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

# The command of record, as RESULTS.md quotes it.
"$GO" run ./cmd/corral bench scale --nodes 10000 --gpus-per-node 8 --seed "$SEED" \
  --json bench/scale/results.json

for n in $POINTS; do
  echo
  "$GO" run ./cmd/corral bench scale --nodes "$n" --gpus-per-node 8 --seed "$SEED" \
    --json "$POINTS_DIR/results-$n.json"
done

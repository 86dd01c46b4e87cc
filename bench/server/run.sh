#!/usr/bin/env bash
# Load test of corral server: N short jobs (`true`, 1 GPU each) submitted
# through the API by C concurrent clients to a `corral server --dev`
# (8 fake H100s), then a check that every acknowledged job ran exactly once.
#
#   bench/server/run.sh [N] [C]     (defaults 10000 and 32)
#   ARRAY=1 bench/server/run.sh N   (the N jobs as one job array, one call)
#
# Prints a Markdown table; RESULTS.md holds the last run.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-10000}
C=${2:-32}
work=$(mktemp -d)
chmod 711 "$work" # jobs run as their tenants' users (as root: nobody for --dev) and must reach their directories
source bench/server/dev-server.sh
go build -o "$work/corral" ./cmd/corral
go build -o "$work/loadgen" ./bench/server/loadgen
[ -n "${ARRAY:-}" ] && SERVER_FLAGS="--max-array-size $N"
start_dev_server "$work"
echo "| corral server load test | $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, go $(go env GOVERSION) |"
echo "|---|---|"
array=()
[ -n "${ARRAY:-}" ] && array=(-array)
"$work/loadgen" -n "$N" -c "$C" "${array[@]}"
echo "| database size | $(du -h "$work/corral.db" | cut -f1) |"

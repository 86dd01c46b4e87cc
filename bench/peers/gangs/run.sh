#!/usr/bin/env bash
# Replays peers.BigGangs (12 gangs of 64 to 512 GPUs among 1,600 single
# pods of 1 to 4 GPUs, over 180 simulated minutes) on 288 fake nodes of 4
# GPUs in 2 blocks of 8 NVL72-like racks, 60 simulated seconds per real
# second, under the upstream kube-scheduler packing GPUs without and with
# its own gang scheduling, Kueue with topology-aware scheduling, and
# corral with and without reservations, each on a fresh control plane
# (kube-apiserver, kube-controller-manager, KWOK). Writes jobs-*.csv,
# holds-*.csv and results.json next to this script, and the table on
# stdout, which RESULTS.md quotes. About 35 minutes on 2 cores.
#
#   bench/peers/gangs/run.sh
#   ARGS="-gangs 4 -small 200 -span 30m -blocks 1" bench/peers/gangs/run.sh   # a quick look
#   OUT=bench/peers/gangs/seed2 ARGS="-seed 2" bench/peers/gangs/run.sh         # another draw, files apart
set -euo pipefail
cd "$(dirname "$0")/../../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
bash scripts/deps/10-kube.sh
bash scripts/deps/30-peers.sh
echo "# $(uname -srm), $(nproc) CPUs, $("$GO" version), at $(git rev-parse --short HEAD)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
OUT=${OUT:-bench/peers/gangs}
mkdir -p "$OUT"
BIN=$(mktemp -d)/gangs-bench
"$GO" build -o "$BIN" ./bench/peers/gangs
# shellcheck disable=SC2086
"$BIN" -schedulers "${SCHEDULERS:-kube-packed,kube-gang,kueue-tas,corral,corral-noreserve}" -out "$OUT" ${ARGS:-}
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

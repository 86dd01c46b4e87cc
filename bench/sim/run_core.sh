#!/usr/bin/env bash
# corral's policy in corral sim through the shared cycle (internal/sched),
# against the simulator's own earlier cycle: the generated four-tenant
# workload on 256 nodes for 14 days, loads 0.8 and 0.95, seeds 1-5, this
# tree against BASE (a commit; default b03e379, the last with the
# simulator's own cycle). Writes core.txt next to this script: per run,
# mean and p99 wait and jobs stopped, for both. About 2 minutes on 2
# cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
BASE=${BASE:-b03e379}
OUT=bench/sim/core.txt
TMP=$(mktemp -d)
trap 'git worktree remove --force "$TMP/base" >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT
"$GO" build -o "$TMP/new" ./cmd/corral
git worktree add -q --detach "$TMP/base" "$BASE"
(cd "$TMP/base" && "$GO" build -o "$TMP/old" ./cmd/corral)
row() { # binary load seed: mean p99 stops
  "$1" sim --nodes 256 --days 14 --load "$2" --seed "$3" --policies corral | awk '$1 == "corral" {print $4, $6, $14; exit}'
}
{
  echo "# corral sim --nodes 256 --days 14 --load L --seed S --policies corral: shared cycle (this tree) against $BASE"
  printf '%-5s %-4s | %-8s %-8s %-6s | %-8s %-8s %-6s\n' load seed "mean" "p99" stops "mean" "p99" stops
  for seed in 1 2 3 4 5; do
    for load in 0.8 0.95; do
      read -r nm np ns < <(row "$TMP/new" "$load" "$seed")
      read -r om op os < <(row "$TMP/old" "$load" "$seed")
      printf '%-5s %-4s | %-8s %-8s %-6s | %-8s %-8s %-6s\n' "$load" "$seed" "$nm" "$np" "$ns" "$om" "$op" "$os"
    done
  done
} | tee "$OUT"
if [ "${SPEED:-}" = 1 ]; then
  {
    echo "# corral sim --nodes 2000 --days 72 --load 0.85 --policies corral: wall seconds, this tree then $BASE, $(nproc) CPUs"
    for b in new old; do
      start=$(date +%s.%N)
      "$TMP/$b" sim --nodes 2000 --days 72 --load 0.85 --policies corral | awk -v b="$b" '$1 == "corral" {printf "%s: mean %s p99 %s stops %s", b, $4, $6, $14; exit}'
      echo " wall $(echo "$(date +%s.%N) - $start" | bc) s"
    done
  } | tee bench/sim/core-speed.txt
fi

#!/usr/bin/env bash
# Times the 100,000-job replay (corral sim --nodes 2000 --days 72 --load
# 0.85 --policies corral) with this tree and with BASE (a commit, default
# 52386eb), alternating N rounds (default 3; BASE first in odd rounds), so
# that a machine whose speed drifts slows both alike. Writes speed-ab.txt
# next to this script: each run's wall and CPU seconds, the medians and
# their ratio. About 7 minutes on 2 cores at N=3; needs GNU time
# (/usr/bin/time, Debian package time).
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
BASE=${BASE:-52386eb}
N=${N:-3}
OUT=bench/sim/speed-ab.txt
TMP=$(mktemp -d)
trap 'git worktree remove --force "$TMP/base" >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT
"$GO" build -o "$TMP/new" ./cmd/corral
git worktree add -q --detach "$TMP/base" "$BASE"
(cd "$TMP/base" && "$GO" build -o "$TMP/old" ./cmd/corral)
run() { # binary: wall cpu
  /usr/bin/time -f '%e %U %S' -o "$TMP/t" "$1" sim --nodes 2000 --days 72 --load 0.85 --policies corral >/dev/null
  awk '{print $1, $2 + $3}' "$TMP/t"
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
{
  echo "# corral sim --nodes 2000 --days 72 --load 0.85 --policies corral: this tree ($(git rev-parse --short HEAD)$(git diff --quiet || echo +edits)) against $BASE, $N rounds, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
  for r in $(seq 1 "$N"); do
    order="new old"
    [ $((r % 2)) = 1 ] && order="old new"
    for b in $order; do
      read -r wall cpu < <(run "$TMP/$b")
      echo "round $r $b wall $wall cpu $cpu"
    done
  done
} | tee "$TMP/runs"
{
  cat "$TMP/runs"
  for b in new old; do
    w=$(awk -v b="$b" '$3 == b {print $5}' "$TMP/runs" | median)
    c=$(awk -v b="$b" '$3 == b {print $7}' "$TMP/runs" | median)
    echo "median $b wall $w s cpu $c s"
  done
  awk '$3 == "new" {n[$2] = $5} $3 == "old" {o[$2] = $5} END {for (r in n) print n[r] / o[r]}' "$TMP/runs" | median | awk '{printf "median of the rounds'"'"' ratios, this tree / base, wall: %.2f\n", $1}'
} > "$OUT"
tail -3 "$OUT"

#!/usr/bin/env bash
# Two options of corral sim measured against the default: the generated
# four-tenant workload on 128 nodes at load 0.95 (the default 30 days),
# seeds 1-5, corral as it is (off), with --defrag, and with
# --backfill conservative --reservations 8; when BASE is set (a commit),
# BASE with --defrag too. Per run: mean and p99 wait and jobs stopped,
# and for --defrag the jobs moved and the GPU-hours gained net of work
# lost. Writes options.txt next to this script. About 1 minute on 2
# cores (2 with BASE).
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
OUT=bench/sim/options.txt
TMP=$(mktemp -d)
trap 'git worktree remove --force "$TMP/base" >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT
"$GO" build -o "$TMP/new" ./cmd/corral
if [ -n "${BASE:-}" ]; then
  git worktree add -q --detach "$TMP/base" "$BASE"
  (cd "$TMP/base" && "$GO" build -o "$TMP/old" ./cmd/corral)
fi
row() { # binary seed [flags]: mean p99 stops [moved gain]
  local bin=$1 seed=$2
  shift 2
  "$bin" sim --nodes 128 --load 0.95 --seed "$seed" --policies corral "$@" |
    awk '$1 == "corral" && !w {out=$4 " " $6 " " $14; w=1} /^ *corral +[0-9]+ jobs moved/ {out=out " " $2 " " $5} END {print out}'
}
{
  echo "# corral sim --nodes 128 --load 0.95 --seed S --policies corral [flags], at $(git rev-parse --short HEAD)${BASE:+; last column BASE $BASE}"
  printf '%-4s | %-20s | %-30s | %-24s' seed "off: mean p99 stops" "--defrag: + moved gain GPU-h" "conservative, 8 reserved"
  [ -n "${BASE:-}" ] && printf ' | %s' "BASE --defrag"
  echo
  for seed in 1 2 3 4 5; do
    printf '%-4s | %-20s | %-30s | %-24s' "$seed" "$(row "$TMP/new" "$seed")" "$(row "$TMP/new" "$seed" --defrag)" \
      "$(row "$TMP/new" "$seed" --backfill conservative --reservations 8)"
    [ -n "${BASE:-}" ] && printf ' | %s' "$(row "$TMP/old" "$seed" --defrag)"
    echo
  done
} | tee "$OUT"

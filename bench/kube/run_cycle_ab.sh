#!/usr/bin/env bash
# The Kubernetes face's cycle in process (BenchmarkSnapshotAndDecide, kept
# snapshot, 1,000 and 5,000 nodes, no API server or upstream filters),
# this tree against BASE (a commit, default 52386eb): both test binaries
# are built, then run alternately N rounds (default 3; BASE first in odd
# rounds). Writes cycle-ab.txt next to this script (or OUT): every run's
# line and the medians of decide ms, snapshot ms and µs per pending pod.
# About 3 minutes on 2 cores at N=3.
#
#   BASE=6a181eb OUT=bench/kube/cycle-ab-deltas.txt bench/kube/run_cycle_ab.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
BASE=${BASE:-52386eb}
N=${N:-3}
OUT=${OUT:-bench/kube/cycle-ab.txt}
BENCH='SnapshotAndDecide/kept/nodes=(1000|5000)/images=false'
TMP=$(mktemp -d)
trap 'git worktree remove --force "$TMP/base" >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT
"$GO" test -c -o "$TMP/new" ./internal/kube
git worktree add -q --detach "$TMP/base" "$BASE"
(cd "$TMP/base" && "$GO" test -c -o "$TMP/old" ./internal/kube)
for r in $(seq 1 "$N"); do
  order="new old"
  [ $((r % 2)) = 1 ] && order="old new"
  for b in $order; do
    (cd internal/kube && "$TMP/$b" -test.run '^$' -test.bench "$BENCH" -test.benchtime 40x) | awk -v b="$b" '/^Benchmark/ {print b, $0}'
  done
done | tee "$TMP/runs"
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
{
  echo "# go test -bench '$BENCH' -benchtime 40x ./internal/kube: this tree ($(git rev-parse --short HEAD)$(git diff --quiet -- . ":!$OUT" || echo +edits)) against $BASE, $N rounds each, alternating, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
  cat "$TMP/runs"
  echo "| nodes | decide ms/cycle, $BASE | this tree | snapshot ms/cycle, $BASE | this tree | µs per pending pod, $BASE | this tree |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
  for n in 1000 5000; do
    row="| $n"
    for col in 6 8 10; do # decide, snapshot, µs per pod: the value before each unit
      for b in old new; do
        row="$row | $(awk -v b="$b" -v n="nodes=$n/" -v c="$col" '$1 == b && index($2, n) {print $(c)}' "$TMP/runs" | median)"
      done
    done
    echo "$row |"
  done
} > "$OUT"
tail -4 "$OUT"

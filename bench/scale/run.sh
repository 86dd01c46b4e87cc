#!/usr/bin/env bash
# Measures corral bench scale on the current tree against a baseline built
# from a git revision, the two binaries run alternately on the same flags,
# and prints the medians of decisions/s, p99 and gang512 p99 for both with
# their ratio. Raw output goes beside this script, to bench/scale/runs/
# (one JSON and one table per run, and summary.txt); RESULTS.md quotes it.
# Run from anywhere; it changes to the repository root. Needs Go, git, jq.
#
#   bench/scale/run.sh                       # 5 rounds at 10,000 nodes x 8 GPUs
#   N=9 bench/scale/run.sh                   # 9 rounds
#   BASE=v0.3 bench/scale/run.sh             # another baseline revision
#   CURRENT=HEAD bench/scale/run.sh          # HEAD instead of the working tree
#   FLAGS="--nodes 2000" bench/scale/run.sh  # other flags, the same for both
#   BIN_BASE=a BIN_CURRENT=b bench/scale/run.sh  # prebuilt binaries (no Go, git or jq needed)
#   SUMMARY_ONLY=1 OUT=dir bench/scale/run.sh    # summarise runs made elsewhere
#
# BASE defaults to the commit before "gang: a single task ... is placed by
# corral's packing policy": single tasks placed by gang's own search, before
# the live policy. CURRENT defaults to the working tree, uncommitted edits
# included; set it to a revision when others' edits break the build.
# The baseline is BASE's placement core run by the current driver
# (internal/scalebench and cmd/corral/bench_scale.go of CURRENT copied over
# BASE), so that the two binaries differ only in the core and both report
# every field (pod_kinds splits 1-GPU from MIG pods; the baseline's 1-GPU
# pods are placed by gang's search, pod_policy "search"); the driver makes
# the same decisions as BASE's own. DRIVER=base builds BASE as it was.
# Each round runs both binaries, the baseline first in odd rounds and the
# current tree first in even ones, so that drifting load on a shared machine
# falls on both alike.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
N=${N:-5}
FLAGS=${FLAGS:-"--nodes 10000 --gpus-per-node 8 --seed 1"}
OUT=${OUT:-$here/runs}
CURRENT=${CURRENT:-}
DRIVER=${DRIVER:-current}
module=github.com/corral-sched/corral
BIN_BASE=${BIN_BASE:-}
BIN_CURRENT=${BIN_CURRENT:-}
if [ -z "${BASE:-}" ] && [ -z "$BIN_BASE" ]; then
  live=$(git log -n1 --format=%H -E --grep="^gang: a single task .*is placed by corral's packing policy")
  [ -n "$live" ] || { echo "run.sh: no commit 'gang: a single task ... packing policy' in git log; set BASE" >&2; exit 1; }
  BASE=$(git rev-parse --short "$live^")
fi
export CGO_CFLAGS=${CGO_CFLAGS:--Wno-deprecated-declarations}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# driver DIR: copies the current tree's benchmark driver into DIR.
driver() {
  rm -rf "$1/internal/scalebench"
  if [ -z "$CURRENT" ]; then
    cp -r internal/scalebench "$1/internal/"
    cp cmd/corral/bench_scale.go "$1/cmd/corral/"
  else
    git archive "$CURRENT" internal/scalebench cmd/corral/bench_scale.go | tar -x -C "$1"
  fi
  # The driver calls a helper an older tree may lack: give it one.
  if ! grep -q '^func unexpected(' "$1"/cmd/corral/*.go; then
    cat > "$1/cmd/corral/driver_shim.go" <<'GO'
package main

import (
	"flag"
	"fmt"
)

func unexpected(fs *flag.FlagSet) error { return fmt.Errorf("unexpected argument %q", fs.Arg(0)) }
GO
  fi
}

# build REV BIN [driver]: builds cmd/corral at git revision REV (the working
# tree when REV is empty) into BIN, with the current driver if asked.
build() {
  local rev=$1 bin=$2
  if [ -z "$rev" ]; then
    "$GO" build -o "$bin" ./cmd/corral
    return
  fi
  local src="$tmp/src-$(basename "$bin")"
  mkdir -p "$src"
  git archive "$rev" | tar -x -C "$src"
  [ "${3:-}" != driver ] || driver "$src"
  local flags=()
  [ "${3:-}" != driver ] || flags=(-ldflags "-X $module/internal/scalebench.podPolicy=search")
  (cd "$src" && "$GO" build "${flags[@]}" -o "$bin" ./cmd/corral)
}

describe() {
  if [ -z "$1" ]; then
    local dirty=""
    [ -z "$(git status --porcelain --untracked-files=no)" ] || dirty=" + uncommitted edits"
    echo "working tree at $(git rev-parse --short HEAD)$dirty"
  else
    echo "$(git rev-parse --short "$1^{commit}") ($1)"
  fi
}

# measure: builds both binaries and runs them alternately into $OUT.
measure() {
  local base current
  if [ -n "$BIN_BASE" ] && [ -n "$BIN_CURRENT" ]; then
    base="prebuilt $BIN_BASE${DESC_BASE:+: $DESC_BASE}"
    current="prebuilt $BIN_CURRENT${DESC_CURRENT:+: $DESC_CURRENT}"
    cp "$BIN_BASE" "$tmp/corral-base"
    cp "$BIN_CURRENT" "$tmp/corral-current"
  else
    case $DRIVER in
      current) overlay=driver base="$(describe "$BASE") with the current driver" ;;
      base) overlay="" base=$(describe "$BASE") ;;
      *) echo "run.sh: DRIVER=$DRIVER: want current or base" >&2; exit 1 ;;
    esac
    current=$(describe "$CURRENT")
    echo "building baseline $base and current $current" >&2
    build "$BASE" "$tmp/corral-base" $overlay
    build "$CURRENT" "$tmp/corral-current"
  fi

  mkdir -p "$OUT"
  rm -f "$OUT"/base-*.json "$OUT"/base-*.txt "$OUT"/current-*.json "$OUT"/current-*.txt
  {
    echo "# corral bench scale $FLAGS, $N rounds, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "# baseline: $base"
    echo "# current:  $current"
    echo "# $(uname -srm), $(nproc) CPUs ($(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), GOMAXPROCS ${GOMAXPROCS:-all}"
    echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
  } >"$OUT/summary.txt"

  # one LABEL I: runs binary LABEL for round I.
  one() {
    # shellcheck disable=SC2086 # FLAGS is a list of flags
    "$tmp/corral-$1" bench scale $FLAGS --quiet --json "$OUT/$1-$2.json" >"$OUT/$1-$2.txt"
    command -v jq >/dev/null || return 0
    jq -r --arg l "$1" --arg i "$2" \
      '"round \($i) \($l): \(.decisions_per_sec|floor) decisions/s, p99 \(.p99_decision_ms) ms, gang512 p99 \(.gang512_p99_ms) ms"' \
      "$OUT/$1-$2.json" >&2
  }

  for i in $(seq 1 "$N"); do
    if [ $((i % 2)) -eq 1 ]; then one base "$i"; one current "$i"; else one current "$i"; one base "$i"; fi
  done
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)" >>"$OUT/summary.txt"
}

if [ -n "${SUMMARY_ONLY:-}" ]; then # runs made elsewhere: summarise $OUT again
  N=$(find "$OUT" -name "current-*.json" | wc -l)
  grep "^#" "$OUT/summary.txt" >"$tmp/header" || true
  mv "$tmp/header" "$OUT/summary.txt"
else
  measure
fi
if ! command -v jq >/dev/null; then
  echo "run.sh: no jq here; summarise elsewhere with SUMMARY_ONLY=1 OUT=<these runs> bench/scale/run.sh" >&2
  exit 0
fi

# median EXPR LABEL: the median of jq expression EXPR over LABEL's runs;
# null when no run has it (a baseline without the field).
median() {
  jq -s "[.[] | $1 | select(. != null)] | sort |
    if length == 0 then null
    elif length % 2 == 1 then .[length / 2 | floor]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end" "$OUT/$2"-*.json
}

# policy LABEL: how the binary placed 1-GPU pods (pod_policy of its first run).
policy() { jq -r '.pod_policy // "?"' "$OUT/$1-1.json" 2>/dev/null || echo "?"; }

row() { # row METRIC EXPR FORMAT
  awk -v m="$1" -v f="$3" -v b="$(median "$2" base)" -v c="$(median "$2" current)" 'BEGIN {
    bs = b == "null" ? "-" : sprintf(f, b); cs = c == "null" ? "-" : sprintf(f, c)
    r = (b == "null" || c == "null" || b == 0) ? "-" : sprintf("%.2f", c / b)
    printf "| %s | %s | %s | %s |\n", m, bs, cs, r }'
}

{
  echo
  echo "| median of $N runs | baseline | current | current / baseline |"
  echo "|---|---:|---:|---:|"
  row "pod decisions/s, releases included" .decisions_per_sec "%.0f"
  row "pod decisions/s, Place only" .decisions_per_sec_place_only "%.0f"
  row "pod decision p50 (ms)" .p50_decision_ms "%.4f"
  row "pod decision p99 (ms)" .p99_decision_ms "%.4f"
  row "pod decision p99.9 (ms)" .p999_decision_ms "%.3f"
  row "1-GPU pods (baseline: $(policy base), current: $(policy current)), decisions/s in Place" '.pod_kinds[0].decisions_per_sec_place_only?' "%.0f"
  row "1-GPU pods, p99 (ms)" '.pod_kinds[0].p99_ms?' "%.4f"
  row "MIG pods, p99 (ms), worst profile" '[.pod_kinds[1:][]?.p99_ms] | max' "%.4f"
  row "gang512 p99 (ms)" .gang512_p99_ms "%.2f"
  row "mixed gangs, time in Place (s)" .mixed_gangs_seconds "%.3f"
  row "pod decisions not placed" .decisions_unfit "%.0f"
  echo
  jq -r '"targets: decisions/s >= \(.thresholds.min_decisions_per_sec), p99 <= \(.thresholds.max_p99_decision_ms) ms, gang512 p99 <= \(.thresholds.max_gang512_p99_ms) ms"' "$OUT/current-1.json"
  echo "current runs meeting all targets: $(jq -s '[.[] | select(.pass.all)] | length' "$OUT"/current-*.json) of $N"
} >>"$OUT/summary.txt"
cat "$OUT/summary.txt"

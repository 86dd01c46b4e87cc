#!/usr/bin/env bash
# Restrictions as real fleets have them: derives `gpuspec -mode fleet`
# variants of the default, multigpu50 and gpushare40 traces in which 5, 15,
# 25 and 33% of the GPU pods may only use the commonest small-node model
# (70% of them; T4 on the openb fleet) or a model family (the rest), with
# families by series (V100M16|V100M32) and by letter (also G2|G3), and runs
# fgd, corral, corral-online and live on them, seeds 42-51, without the LP
# bound. Writes restricted.json, restricted.txt (the terminal table, with
# gpuspec's counts) and restricted.md (summarize's tables) here; the
# derived CSVs go to a temporary directory, or to KEEP=dir if set.
#
#   bench/fgd/run_restricted.sh                  # build this tree and run
#   BIN=/tmp/corral NAME=restricted_fix bench/fgd/run_restricted.sh
#                                                # another binary, other names
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
export CGO_CFLAGS="${CGO_CFLAGS:--Wno-deprecated-declarations}"
DATA=${DATA:-../shared/data/alibaba-gpu-v2023}
OUT=bench/fgd
NAME=${NAME:-restricted}
TRACES=${TRACES:-default multigpu50 gpushare40}
SHARES=${SHARES:-0.05 0.15 0.25 0.33}
SMALL=${SMALL:-0.7}
FAMILIES=${FAMILIES:-series letter}
POLICIES=${POLICIES:-fgd,corral,corral-online,live}
if [ -n "${KEEP:-}" ]; then
  TMP=$KEEP; mkdir -p "$TMP"
else
  TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fi

pods=()
: >"$TMP/counts.txt"
go build -o "$TMP/gpuspec" ./bench/fgd/gpuspec
for family in $FAMILIES; do
  for trace in $TRACES; do
    for share in $SHARES; do
      pods+=("$("$TMP/gpuspec" -mode fleet -family "$family" -small "$SMALL" \
        -nodes "$DATA/openb_node_list_gpu_node.csv" -pods "$DATA/openb_pod_list_$trace.csv" \
        -share "$share" -out "$TMP" 2>>"$TMP/counts.txt")")
    done
  done
done
if [ -z "${BIN:-}" ]; then
  BIN=$TMP/corral
  go build -o "$BIN" ./cmd/corral
fi
start=$(date +%s)
{
  paste -d' ' <(printf '%s\n' "${pods[@]##*/}") "$TMP/counts.txt"
  "$BIN" bench fgd --nodes "$DATA/openb_node_list_gpu_node.csv" --pods "$(IFS=,; echo "${pods[*]}")" \
    --policies "$POLICIES" --seeds 42-51 --bound=false --quiet \
    --json "$OUT/$NAME.json"
  echo "grid wall time: $(( $(date +%s) - start )) s on $(nproc) cores"
} | tee "$OUT/$NAME.txt"
go run ./bench/fgd/summarize "$OUT/$NAME.json" | tee "$OUT/$NAME.md"

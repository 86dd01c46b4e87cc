#!/usr/bin/env bash
# Load test of corral server: N short jobs (`true`, 1 GPU each) submitted
# through the API by C concurrent clients to a `corral server --dev`
# (8 fake H100s), then a check that every acknowledged job ran exactly once.
#
#   bench/server/run.sh [N] [C]     (defaults 10000 and 32)
#
# Prints a Markdown table; RESULTS.md holds the last run.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-10000}
C=${2:-32}
work=$(mktemp -d)
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; [ -n "$server_pid" ] && wait "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/corral" ./cmd/corral
go build -o "$work/loadgen" ./bench/server/loadgen
port=$(( 20000 + RANDOM % 20000 ))
"$work/corral" server --dev --db "$work/corral.db" --listen "127.0.0.1:$port" >"$work/server.out" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 100); do
	grep -q '^export CORRAL_TOKEN=' "$work/server.out" 2>/dev/null && break
	sleep 0.1
done
eval "$(grep '^export CORRAL_TOKEN=' "$work/server.out")"
echo "| corral server load test | $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, go $(go env GOVERSION) |"
echo "|---|---|"
"$work/loadgen" -n "$N" -c "$C"
echo "| database size | $(du -h "$work/corral.db" | cut -f1) |"

#!/usr/bin/env bash
# The same mixed stream of GPU jobs through corral server and through
# Slurm 22.05 on this host (8 fake H100s each): whole-GPU jobs, quarter-GPU
# jobs and 2x2-GPU gangs arriving in waves (bench/server/mixed). Prints one
# table row per system: submit latency, submit-to-start waits, makespan and
# GPU-seconds left idle while work waited. Needs root and slurm-wlm + munge
# for the Slurm half (see slurm.sh).
#
#   bench/server/mixed.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
chmod 711 "$work" # jobs run as their tenants' users (as root: nobody for --dev) and must reach their directories
source bench/server/dev-server.sh
go build -o "$work/corral" ./cmd/corral
go build -o "$work/mixed" ./bench/server/mixed
start_dev_server "$work"
mkdir -p "$work/stamps"
echo "| $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs | submit latency | submit to start | makespan | idle while waiting | unfinished |"
echo "|---|---|---|---|---|---|"
"$work/mixed" -target corral -dir "$work/stamps"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
SLURM_GEN=mixed bash bench/server/slurm.sh

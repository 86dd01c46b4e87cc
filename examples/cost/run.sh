#!/bin/sh
# Regenerates this example: the five moves priced by one replay each
# (corral sim --moves; the floor with a 1-year discount commitment at the
# rate of discount.yaml and with a Capacity Block) and the price catalog
# they used (corral prices).
# Ages are counted to a fixed day so that the output does not change with
# the clock. Run from anywhere; about 10 seconds on 2 cores.
set -eu
cd "$(dirname "$0")"
corral() { go run ../../cmd/corral "$@"; }
NOW=2026-12-01
corral sim --moves --nodes 32 --days 14 --seed 1 --now $NOW --prices discount.yaml --json moves.json --html report.html > moves.txt
corral prices --now $NOW > prices.txt
# The same replay for four more seeds of the workload: the moves' savings
# vary with the workload drawn.
: > seeds.txt
for seed in 2 3 4 5; do
	echo "seed $seed" >> seeds.txt
	corral sim --moves --nodes 32 --days 14 --seed $seed --now $NOW --prices discount.yaml | sed -n '3,12p' >> seeds.txt
	echo >> seeds.txt
done

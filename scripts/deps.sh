#!/usr/bin/env bash
# Installs what the test suite needs beyond Go: runs every script in
# scripts/deps/ in name order. Each is idempotent and caches what it builds
# outside the repository, so a second run takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
for s in scripts/deps/*.sh; do
	[ -e "$s" ] || continue
	echo "deps: $s" >&2
	bash "$s"
done

#!/usr/bin/env bash
# The test command: installs what the tests need (scripts/deps.sh, cached
# after the first run), then vet, gofmt, every test with the race detector
# and the integration tests on, and the fuzzers for a count of executions.
# .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
./scripts/deps.sh
go vet ./...
gofmt -l . | (! grep .)
CORRAL_INTEGRATION=1 go test -race -count=1 ./...
./scripts/fuzz.sh

#!/usr/bin/env bash
# Runs every fuzz target briefly (FUZZTIME each, default 10s): the job-file
# parser and the API's request decoding. Their seed corpora also run as
# ordinary tests; this looks for new failing inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
t=${FUZZTIME:-10s}
go test -run '^$' -fuzz '^FuzzParseJobFile$' -fuzztime "$t" ./internal/server/api
go test -run '^$' -fuzz '^FuzzDecodeJobRequest$' -fuzztime "$t" ./internal/server

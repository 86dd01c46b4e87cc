#!/usr/bin/env bash
# Runs every fuzz target briefly (FUZZTIME each, default 100000x: a count of
# executions, about 10 s each on 2 cores): the job-file parser and the
# API's request decoding. Their seed corpora also run as ordinary tests;
# this looks for new failing inputs. A count rather than a duration: with
# a duration, Go 1.26's fuzz coordinator can report its own deadline as a
# failure ("context deadline exceeded", no failing input) on a busy
# machine (golang/go#75804, fixed in Go 1.27).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
t=${FUZZTIME:-100000x}
go test -run '^$' -fuzz '^FuzzParseJobFile$' -fuzztime "$t" ./internal/server/api
go test -run '^$' -fuzz '^FuzzDecodeJobRequest$' -fuzztime "$t" ./internal/server

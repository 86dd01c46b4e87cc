#!/usr/bin/env bash
# A newcomer's first build, checked: in a fresh build cache (so nothing is
# reused and every C compiler message would show), `go build ./cmd/corral`
# must print nothing; corral must build with CGO_ENABLED=0 (NVML is loaded
# at run time, internal/discover/nvml_linux.go); and -tags nonvml must give
# a static binary (what deploy/Dockerfile ships). Takes minutes: the fresh
# cache rebuilds the standard library and every dependency.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
cache=$(mktemp -d "${TMPDIR:-/tmp}/corral-clean-build.XXXXXX")
out=$(mktemp -d "${TMPDIR:-/tmp}/corral-clean-bin.XXXXXX")
trap 'rm -rf "$cache" "$out"' EXIT
fail=0

msg=$(GOCACHE=$cache go build -o "$out/corral" ./cmd/corral 2>&1) || fail=1
if [ -n "$msg" ] || [ $fail -ne 0 ]; then
	echo "clean-build: go build ./cmd/corral in a fresh cache printed $(printf '%s\n' "$msg" | wc -l) lines:" >&2
	printf '%s\n' "$msg" | head -20 >&2
	fail=1
else
	echo "clean-build: go build ./cmd/corral (fresh cache): quiet"
fi

if msg=$(GOCACHE=$cache CGO_ENABLED=0 go build -o "$out/corral-nocgo" ./cmd/corral 2>&1) && [ -z "$msg" ]; then
	echo "clean-build: CGO_ENABLED=0 go build ./cmd/corral: ok"
else
	echo "clean-build: CGO_ENABLED=0 go build ./cmd/corral failed:" >&2
	printf '%s\n' "$msg" | head -20 >&2
	fail=1
fi

if msg=$(GOCACHE=$cache CGO_ENABLED=0 go build -tags nonvml -o "$out/corral-static" ./cmd/corral 2>&1) && [ -z "$msg" ]; then
	if command -v readelf >/dev/null && readelf -l "$out/corral-static" | grep -q INTERP; then
		echo "clean-build: CGO_ENABLED=0 -tags nonvml: the binary is dynamically linked" >&2
		fail=1
	else
		echo "clean-build: CGO_ENABLED=0 go build -tags nonvml ./cmd/corral: ok, static"
	fi
else
	echo "clean-build: CGO_ENABLED=0 go build -tags nonvml ./cmd/corral failed:" >&2
	printf '%s\n' "$msg" | head -20 >&2
	fail=1
fi
exit $fail

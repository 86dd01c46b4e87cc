#!/usr/bin/env bash
# The peers internal/peers and bench/peers replay a workload under, on the
# control plane of 10-kube.sh: KWOK (fake nodes that run pods for a set time
# and complete them) and Kueue's manager with its CRDs, built from the Go
# module proxy into ~/.cache/corral/bin (CRDs into ~/.cache/corral/kueue-crd),
# and an etcd recent enough to report watch progress (3.4.31 and later;
# Debian's 3.4.23 is not), without which the API server refuses the streamed
# watch lists KWOK's client asks for: ~/.cache/corral/peers-bin/etcd.
# Idempotent: a stamp file names the versions built; when it matches and the
# binaries are there it exits at once.
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"

KWOK_VERSION=v0.8.0
KUEUE_VERSION=v0.17.0
ETCD_VERSION=v3.6.16
CACHE="${CORRAL_CACHE:-$HOME/.cache/corral}"
BIN="$CACHE/bin"
CRD="$CACHE/kueue-crd"
STAMP="$CACHE/peers.version"
WANT="kwok $KWOK_VERSION kueue $KUEUE_VERSION etcd $ETCD_VERSION"
mkdir -p "$BIN"

# Kueue's manager reads its metrics certificate from this fixed path
# unless it manages certificates itself (which needs its webhook Service):
# internal/peers writes a self-signed one there.
KUEUE_CERTS=/etc/kueue/metrics/certs
if [ ! -w "$KUEUE_CERTS" ]; then
	sudo=""
	[ "$(id -u)" = 0 ] || sudo="sudo"
	$sudo mkdir -p "$KUEUE_CERTS"
	$sudo chown "$(id -u)" "$KUEUE_CERTS"
fi

if [ -x "$BIN/kwok" ] && [ -x "$BIN/kueue" ] && [ -x "$CACHE/peers-bin/etcd" ] && [ -d "$CRD" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$WANT" ]; then
	exit 0
fi

# Neither module replaces any of its dependencies, so go install builds each
# as released.
GOBIN="$BIN" go install -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
GOBIN="$BIN" go install -ldflags "-s -w" "sigs.k8s.io/kueue/cmd/kueue@$KUEUE_VERSION"

dir="$(go mod download -json "sigs.k8s.io/kueue@$KUEUE_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
rm -rf "$CRD"
mkdir -p "$CRD"
cp "$dir"/config/components/crd/bases/*.yaml "$CRD/"
chmod -R u+w "$CRD"
# etcd's server module replaces nothing either, but is a main package of a
# module with a go.mod of its own: build it from a module that requires it.
src="$CACHE/etcd-peers-src"
mkdir -p "$src" "$CACHE/peers-bin"
(
	cd "$src"
	printf 'module corral.local/etcd-build\n\ngo 1.26\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >go.mod
	printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >tools.go
	go mod tidy
	go build -ldflags "-s -w" -o "$CACHE/peers-bin/etcd" go.etcd.io/etcd/server/v3
)
echo "$WANT" >"$STAMP"

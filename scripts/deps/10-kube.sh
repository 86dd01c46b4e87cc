#!/usr/bin/env bash
# A real Kubernetes control plane for the integration tests of internal/kube
# and for bench/kube and bench/peers: kube-apiserver, kube-scheduler and
# kube-controller-manager v1.37.2 built from the Go module proxy, and etcd,
# all in ~/.cache/corral/bin. Idempotent: when the
# binaries are there with the right version it exits at once.
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"

K8S_VERSION=v1.37.2
STAGING_VERSION=v0.37.2
ETCD_VERSION=v3.6.16
CACHE="${CORRAL_CACHE:-$HOME/.cache/corral}"
BIN="$CACHE/bin"
SRC="$CACHE/k8s-src"
mkdir -p "$BIN"

have_version() { # binary, expected substring of --version
	local v
	[ -x "$BIN/$1" ] && v="$("$BIN/$1" --version 2>/dev/null)" && [[ $v == *"$2"* ]]
}

build_kube() { # the commands to build, as k8s.io/kubernetes/cmd/<name>
	mkdir -p "$SRC"
	cd "$SRC"
	cat >go.mod <<MOD
module corral.local/k8s-build

go 1.26

require k8s.io/kubernetes $K8S_VERSION
MOD
	cat >tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
GO
	# k8s.io/kubernetes replaces its staging modules with local paths; name
	# each of them at the released version instead.
	local kmod
	kmod="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
	awk '/^replace \($/ {in_r=1; next} in_r && /^\)/ {in_r=0} in_r && $2 == "=>" {print $1}' "$kmod" |
		grep -v -e sample-cli-plugin -e sample-controller |
		while read -r m; do echo "replace $m => $m $STAGING_VERSION"; done >>go.mod
	go mod tidy
	go build -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37" \
		-o "$BIN/" "${@/#/k8s.io/kubernetes/cmd/}"
}

install_etcd() {
	# Debian's etcd-server first; otherwise build the upstream server module.
	if ! command -v etcd >/dev/null 2>&1 && [ -x /usr/bin/apt-get ]; then
		local sudo=""
		[ "$(id -u)" = 0 ] || sudo="sudo"
		export DEBIAN_FRONTEND=noninteractive
		{ $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends etcd-server; } >/dev/null 2>&1 || true
	fi
	if command -v etcd >/dev/null 2>&1; then
		ln -sf "$(command -v etcd)" "$BIN/etcd"
		return
	fi
	local dir="$CACHE/etcd-src"
	mkdir -p "$dir"
	cd "$dir"
	printf 'module corral.local/etcd-build\n\ngo 1.26\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >go.mod
	printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >tools.go
	go mod tidy
	go build -o "$BIN/etcd" go.etcd.io/etcd/server/v3
}

# Build only what is missing or of another version (a cache from before
# kube-controller-manager was added gets just that).
missing=()
for b in kube-apiserver kube-scheduler kube-controller-manager; do
	have_version "$b" "$K8S_VERSION" || missing+=("$b")
done
if [ ${#missing[@]} -gt 0 ]; then
	(build_kube "${missing[@]}")
fi
if ! have_version etcd "etcd Version"; then
	(install_etcd)
fi
have_version kube-apiserver "$K8S_VERSION"
have_version kube-controller-manager "$K8S_VERSION"
have_version etcd "etcd Version"

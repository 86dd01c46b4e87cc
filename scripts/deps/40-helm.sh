#!/usr/bin/env bash
# Helm, for the chart in deploy/chart/corral and its tests (helm lint,
# helm template): helm.sh/helm/v3 built from the Go module proxy into
# ~/.cache/corral/bin. Idempotent: a stamp file names the version built;
# when it matches and the binary is there it exits at once.
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"

HELM_VERSION=v3.22.0
CACHE="${CORRAL_CACHE:-$HOME/.cache/corral}"
BIN="$CACHE/bin"
STAMP="$CACHE/helm.version"
WANT="helm $HELM_VERSION"
mkdir -p "$BIN"

if [ -x "$BIN/helm" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$WANT" ]; then
	exit 0
fi

# helm's main module replaces none of its dependencies, so go install builds
# it as released. The version is stamped the way helm's own Makefile does.
GOBIN="$BIN" go install \
	-ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
	"helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
"$BIN/helm" version --short | grep -q "$HELM_VERSION"
echo "$WANT" >"$STAMP"

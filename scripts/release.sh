#!/usr/bin/env bash
# Builds corral's release artifacts into dist/ (or $DIST), without a
# container daemon:
#   corral_VERSION_OS_ARCH               the command, CGO_ENABLED=0, for PLATFORMS
#   image/corral_VERSION_linux_ARCH      fully static (-tags nonvml) for the image
#   corral_VERSION_image_linux_ARCH.tar  the image, for docker load / podman load
#   corral_VERSION_oci/                  the image as an OCI layout, all IMAGE_PLATFORMS
#   SHA256SUMS                           of the binaries and image tarballs
# VERSION defaults to git describe, COMMIT to the checkout's HEAD. The
# linux binaries load NVIDIA's libnvidia-ml.so.1 at run time for corral
# server's GPU discovery; the image's binaries leave NVML out (the
# Kubernetes scheduler needs none, and the image has no C library).
#   scripts/release.sh
#   VERSION=v0.1.0 PLATFORMS="linux/amd64" IMAGE_PLATFORMS="linux/amd64" scripts/release.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || true)}
if [ -z "${MODIFIED:-}" ]; then
	MODIFIED=false
	[ -n "$(git status --porcelain 2>/dev/null)" ] && MODIFIED=true
fi
# The commit's time, so that two builds of one commit give the same image.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
DIST=${DIST:-dist}
PLATFORMS=${PLATFORMS-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
IMAGE_PLATFORMS=${IMAGE_PLATFORMS-linux/amd64 linux/arm64}

pkg=github.com/corral-sched/corral/internal/buildinfo
ldflags="-s -w -X $pkg.version=$VERSION -X $pkg.commit=$COMMIT -X $pkg.modified=$MODIFIED"
mkdir -p "$DIST/image"

build() { # os arch output [go build flags]
	local os=$1 arch=$2 out=$3
	shift 3
	echo "release: $out" >&2
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false "$@" -ldflags "$ldflags" -o "$out" ./cmd/corral
}
for p in $PLATFORMS; do
	build "${p%/*}" "${p#*/}" "$DIST/corral_${VERSION}_${p%/*}_${p#*/}"
done
bins=()
for p in $IMAGE_PLATFORMS; do
	out="$DIST/image/corral_${VERSION}_${p%/*}_${p#*/}"
	build "${p%/*}" "${p#*/}" "$out" -tags nonvml
	bins+=(-binary "$p=$out")
done
if [ ${#bins[@]} -gt 0 ]; then
	go run ./scripts/ociimage -version "$VERSION" -revision "$COMMIT" -created "$SOURCE_DATE_EPOCH" -out "$DIST" "${bins[@]}" >&2
fi

cd "$DIST"
files=$(ls -d corral_"${VERSION}"_* image/corral_"${VERSION}"_* 2>/dev/null | grep -v '_oci$' || true)
if command -v sha256sum >/dev/null; then
	sha256sum $files >SHA256SUMS
else
	shasum -a 256 $files >SHA256SUMS
fi
cat SHA256SUMS

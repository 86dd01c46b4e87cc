// Package ociimage builds corral's container image without a container
// daemon: one layer holding the static Linux binary at /corral, appended
// to an empty base (no pull, no shell, no C library), with the entrypoint
// the manifests in deploy/ run, a non-root user and the OCI labels of the
// version, commit and source. It writes the images as an OCI image
// layout (one index, a manifest per platform) and as a tarball per
// platform that docker load and podman load read.
//
// scripts/release.sh calls it through scripts/ociimage. Start with Build,
// then WriteLayout and WriteTarball. It imports go-containerregistry and
// the standard library only.
package ociimage

package ociimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the image holds and how it runs; deploy/deployment.yaml runs
// BinaryPath as its command (a test checks that they agree).
const (
	Repository = "ghcr.io/corral-sched/corral"
	Source     = "https://github.com/corral-sched/corral"
	BinaryPath = "/corral"
	// User is distroless's nonroot: no entry in /etc/passwd is needed
	// for a numeric user.
	User = "65532:65532"
	// Port is corral kube-scheduler's --http-address default: /livez,
	// /readyz and /metrics.
	Port = "10251/tcp"
)

// Spec is one platform's image.
type Spec struct {
	Binary   string      // the static binary for Platform, on this machine
	Platform v1.Platform // linux/amd64, linux/arm64
	Version  string      // a release tag, such as v0.1.0
	Revision string      // the commit the binary was built from
	Created  time.Time   // the image's and the layer's time (for reproducible builds, the commit's)
}

// Labels are the OCI annotations the image's config carries.
func (s Spec) Labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    "corral",
		"org.opencontainers.image.version":  s.Version,
		"org.opencontainers.image.revision": s.Revision,
		"org.opencontainers.image.source":   Source,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.created":  s.Created.UTC().Format(time.RFC3339),
	}
}

// Build makes the image of s: an empty OCI base and one layer with the
// binary.
func Build(s Spec) (v1.Image, error) {
	data, err := os.ReadFile(s.Binary)
	if err != nil {
		return nil, fmt.Errorf("read binary: %w", err)
	}
	layer, err := binaryLayer(data, s.Created)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{Created: v1.Time{Time: s.Created}, CreatedBy: "scripts/release.sh: COPY corral " + BinaryPath, Comment: s.Version}})
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = s.Platform.OS, s.Platform.Architecture, s.Platform.Variant
	cf.Created = v1.Time{Time: s.Created}
	cf.Config.Entrypoint = []string{BinaryPath}
	cf.Config.Cmd = nil
	cf.Config.User = User
	cf.Config.WorkingDir = "/"
	cf.Config.ExposedPorts = map[string]struct{}{Port: {}}
	cf.Config.Labels = s.Labels()
	return mutate.ConfigFile(img, cf)
}

// binaryLayer is a gzipped tar of one file, BinaryPath, owned by root and
// executable by everyone, dated created.
func binaryLayer(binary []byte, created time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: BinaryPath[1:], Mode: 0o755, Size: int64(len(binary)), ModTime: created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	tarball := buf.Bytes()
	return tarballLayer(tarball)
}

func tarballLayer(b []byte) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

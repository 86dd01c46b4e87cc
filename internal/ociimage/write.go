package ociimage

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// RefName is the annotation an OCI layout names an image by (skopeo's
// oci:DIR:NAME, crane's --platform with a layout).
const RefName = "org.opencontainers.image.ref.name"

// WriteLayout writes imgs to an OCI image layout in dir: an index.json
// with one image index, tag, whose manifests are imgs, one per platform
// (a multi-platform image, as a registry would serve it).
func WriteLayout(dir, tag string, imgs ...v1.Image) error {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			return fmt.Errorf("config: %w", err)
		}
		p := cf.Platform()
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	l, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("layout %s: %w", dir, err)
	}
	if err := l.AppendIndex(idx, layout.WithAnnotations(map[string]string{RefName: tag})); err != nil {
		return fmt.Errorf("layout %s: %w", dir, err)
	}
	return nil
}

// WriteTarball writes img to path as a tarball that docker load and
// podman load read, tagged ref (ghcr.io/corral-sched/corral:v0.1.0).
func WriteTarball(path, ref string, img v1.Image) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

package ociimage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func spec(t *testing.T, arch string) Spec {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "corral")
	if err := os.WriteFile(bin, []byte("not really a binary "+arch), 0o755); err != nil {
		t.Fatal(err)
	}
	return Spec{Binary: bin, Platform: v1.Platform{OS: "linux", Architecture: arch}, Version: "v0.1.0", Revision: "abc", Created: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
}

// Two builds of one binary give the same image, byte for byte, and the
// layer holds the binary at BinaryPath.
func TestBuildIsReproducible(t *testing.T) {
	s := spec(t, "amd64")
	a, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Build(s)
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Errorf("two builds: %v and %v", da, db)
	}
	if mt, _ := a.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("media type %s, want an OCI manifest", mt)
	}
	layers, _ := a.Layers()
	got := filepath.Join(t.TempDir(), "out")
	extract(t, layers[0], BinaryPath[1:], got)
	want, _ := os.ReadFile(s.Binary)
	if data, _ := os.ReadFile(got); !bytes.Equal(data, want) {
		t.Errorf("the layer holds %q, want %q", data, want)
	}
}

// The layout holds one index named by the tag, with one manifest per
// platform.
func TestWriteLayoutPerPlatform(t *testing.T) {
	var imgs []v1.Image
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := Build(spec(t, arch))
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	dir := t.TempDir()
	if err := WriteLayout(dir, "v0.1.0", imgs...); err != nil {
		t.Fatal(err)
	}
	l, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, _ := l.ImageIndex()
	im, _ := top.IndexManifest()
	idx, err := top.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := idx.IndexManifest()
	var archs []string
	for _, d := range m.Manifests {
		archs = append(archs, d.Platform.OS+"/"+d.Platform.Architecture)
	}
	if len(archs) != 2 || archs[0] != "linux/amd64" || archs[1] != "linux/arm64" {
		t.Errorf("platforms %v, want linux/amd64 and linux/arm64", archs)
	}
}

package ociimage

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// A release built by scripts/release.sh for this machine's architecture:
// the image read back from the OCI layout and from the tarball has the
// entrypoint, user, port and labels; the binary taken out of its layer
// runs here and prints the commit; SHA256SUMS matches the files.
func TestReleaseImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds corral")
	}
	if runtime.GOOS != "linux" {
		t.Skip("runs the linux binary from the image")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	const version, commit = "v0.0.0-test", "0123456789abcdef0123456789abcdef01234567"
	dist := t.TempDir()
	cmd := exec.Command(filepath.Join(root, "scripts", "release.sh"))
	cmd.Env = append(os.Environ(), "DIST="+dist, "VERSION="+version, "COMMIT="+commit, "MODIFIED=false",
		"SOURCE_DATE_EPOCH=1764547200", "PLATFORMS=", "IMAGE_PLATFORMS=linux/"+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	checkSums(t, dist)

	l, err := layout.FromPath(filepath.Join(dist, "corral_"+version+"_oci"))
	if err != nil {
		t.Fatal(err)
	}
	img := layoutImage(t, l, version)
	checkImage(t, img, version, commit)

	tag, _ := name.NewTag(Repository + ":" + version)
	fromTar, err := tarball.ImageFromPath(filepath.Join(dist, "corral_"+version+"_image_linux_"+runtime.GOARCH+".tar"), &tag)
	if err != nil {
		t.Fatal(err)
	}
	// The tarball's manifest is Docker's, so compare the config, which
	// names the layers by their content.
	c1, _ := img.ConfigName()
	c2, err := fromTar.ConfigName()
	if err != nil || c1 != c2 {
		t.Errorf("the tarball's image config %v (%v) is not the layout's %v", c2, err, c1)
	}
}

// layoutImage is the image tagged version in l, for this architecture.
func layoutImage(t *testing.T, l layout.Path, version string) v1.Image {
	t.Helper()
	top, err := l.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := top.IndexManifest()
	if err != nil || len(im.Manifests) != 1 || im.Manifests[0].Annotations[RefName] != version {
		t.Fatalf("index.json: %+v, %v: want one index named %s", im, err, version)
	}
	idx, err := top.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == runtime.GOARCH {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("no linux/%s image in %+v", runtime.GOARCH, m.Manifests)
	return nil
}

func checkImage(t *testing.T, img v1.Image, version, commit string) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if !slices.Equal(c.Entrypoint, []string{BinaryPath}) || c.User != User || cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("config: entrypoint %v user %q platform %s/%s; want [%s], %s, linux/%s", c.Entrypoint, c.User, cf.OS, cf.Architecture, BinaryPath, User, runtime.GOARCH)
	}
	if _, ok := c.ExposedPorts[Port]; !ok {
		t.Errorf("exposed ports %v lack %s", c.ExposedPorts, Port)
	}
	for k, want := range map[string]string{"org.opencontainers.image.version": version, "org.opencontainers.image.revision": commit, "org.opencontainers.image.source": Source} {
		if c.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], want)
		}
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	bin := filepath.Join(t.TempDir(), "corral")
	extract(t, layers[0], BinaryPath[1:], bin)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v: %s", BinaryPath, err, out)
	}
	if want := "corral " + version + " (commit " + commit[:12] + ") "; !strings.HasPrefix(string(out), want) {
		t.Errorf("the image's binary says %q, want it to start with %q", out, want)
	}
}

// extract writes the file name of layer to path, executable.
func extract(t *testing.T, layer v1.Layer, name, path string) {
	t.Helper()
	rc, err := layer.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("no %s in the layer", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != name {
			continue
		}
		if h.Mode&0o111 != 0o111 || h.Uid != 0 {
			t.Errorf("%s: mode %o uid %d, want executable by all, owned by root", name, h.Mode, h.Uid)
		}
		var b bytes.Buffer
		if _, err := io.Copy(&b, tr); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o755); err != nil {
			t.Fatal(err)
		}
		return
	}
}

// checkSums checks that SHA256SUMS lists every binary and image tarball
// in dist with its hash.
func checkSums(t *testing.T, dist string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Errorf("SHA256SUMS has %d lines, want the image's binary and tarball:\n%s", len(lines), data)
	}
	for _, line := range lines {
		sum, file, ok := strings.Cut(line, "  ")
		b, err := os.ReadFile(filepath.Join(dist, file))
		if !ok || err != nil {
			t.Errorf("SHA256SUMS line %q: %v", line, err)
			continue
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
			t.Errorf("%s: SHA256SUMS says %s, the file is %x", file, sum, h)
		}
	}
}

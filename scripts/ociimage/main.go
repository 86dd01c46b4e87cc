// Command ociimage writes corral's container image, for scripts/release.sh:
// an OCI image layout with one manifest per platform, and a docker-archive
// tarball per platform, built from static binaries without a container
// daemon (internal/ociimage).
//
//	go run ./scripts/ociimage -version v0.1.0 -revision SHA -out dist \
//	    -binary linux/amd64=dist/image/corral_linux_amd64 ...
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/corral-sched/corral/internal/ociimage"
)

type binaries []string

func (b *binaries) String() string     { return strings.Join(*b, ",") }
func (b *binaries) Set(v string) error { *b = append(*b, v); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	version := fs.String("version", "", "the release's version tag (required)")
	revision := fs.String("revision", "", "the commit the binaries were built from")
	created := fs.Int64("created", 0, "the images' creation time, seconds since 1970 (SOURCE_DATE_EPOCH; 0: the epoch)")
	out := fs.String("out", "dist", "directory to write corral_VERSION_oci/ and corral_VERSION_image_OS_ARCH.tar into")
	repo := fs.String("repository", ociimage.Repository, "the image's name")
	var bins binaries
	fs.Var(&bins, "binary", "OS/ARCH=PATH of a static binary (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" || len(bins) == 0 {
		return fmt.Errorf("give -version and at least one -binary")
	}
	ref := *repo + ":" + *version
	var imgs []v1.Image
	for _, b := range bins {
		plat, path, ok := strings.Cut(b, "=")
		p, err := v1.ParsePlatform(plat)
		if !ok || err != nil {
			return fmt.Errorf("-binary %q: want OS/ARCH=PATH", b)
		}
		img, err := ociimage.Build(ociimage.Spec{Binary: path, Platform: *p, Version: *version, Revision: *revision, Created: time.Unix(*created, 0).UTC()})
		if err != nil {
			return fmt.Errorf("image for %s: %w", plat, err)
		}
		tar := filepath.Join(*out, fmt.Sprintf("corral_%s_image_%s_%s.tar", *version, p.OS, p.Architecture))
		if err := ociimage.WriteTarball(tar, ref, img); err != nil {
			return err
		}
		fmt.Println(tar)
		imgs = append(imgs, img)
	}
	dir := filepath.Join(*out, "corral_"+*version+"_oci")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := ociimage.WriteLayout(dir, *version, imgs...); err != nil {
		return err
	}
	fmt.Println(dir)
	return nil
}

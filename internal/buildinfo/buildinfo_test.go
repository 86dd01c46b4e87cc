package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func stamped(version string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/corral-sched/corral", Version: version}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

const sha = "0123456789abcdef0123456789abcdef01234567"

func TestFrom(t *testing.T) {
	here := runtime.GOOS + "/" + runtime.GOARCH
	cases := []struct {
		name string
		bi   *debug.BuildInfo
		ov   Override
		want Info
		line string
	}{
		{"no build information (go test)", nil, Override{},
			Info{Version: Dev, GoVersion: runtime.Version(), Platform: here},
			"corral dev " + runtime.Version() + " " + here},
		{"go build in a clean checkout",
			stamped("v0.0.0-20261201120000-0123456789ab", "vcs.revision", sha, "vcs.time", "2026-12-01T12:00:00Z", "vcs.modified", "false", "GOOS", "linux", "GOARCH", "arm64"),
			Override{},
			Info{Version: "v0.0.0-20261201120000-0123456789ab", Commit: sha, CommitTime: "2026-12-01T12:00:00Z", GoVersion: "go1.26.8", Platform: "linux/arm64"},
			"corral v0.0.0-20261201120000-0123456789ab (commit 0123456789ab) go1.26.8 linux/arm64"},
		{"a modified tree, version not stamped",
			stamped("(devel)", "vcs.revision", sha, "vcs.modified", "true", "GOOS", "darwin", "GOARCH", "amd64"),
			Override{},
			Info{Version: Dev, Commit: sha, Modified: true, GoVersion: "go1.26.8", Platform: "darwin/amd64"},
			"corral dev (commit 0123456789ab, modified) go1.26.8 darwin/amd64"},
		{"a release build's link-time values win",
			stamped("(devel)", "vcs.revision", "ffff", "vcs.modified", "true", "GOOS", "linux", "GOARCH", "amd64"),
			Override{Version: "v0.1.0", Commit: sha, Modified: "false"},
			Info{Version: "v0.1.0", Commit: sha, GoVersion: "go1.26.8", Platform: "linux/amd64"},
			"corral v0.1.0 (commit 0123456789ab) go1.26.8 linux/amd64"},
		{"go install of a tagged module (no VCS information)",
			stamped("v0.2.0", "GOOS", "linux", "GOARCH", "amd64"), Override{},
			Info{Version: "v0.2.0", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			"corral v0.2.0 go1.26.8 linux/amd64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := From(c.bi, c.ov)
			if got != c.want {
				t.Errorf("From:\n got %+v\nwant %+v", got, c.want)
			}
			if s := got.String(); s != c.line {
				t.Errorf("String:\n got %q\nwant %q", s, c.line)
			}
		})
	}
}

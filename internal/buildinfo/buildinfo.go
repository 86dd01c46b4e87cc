package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at link time by release builds (-ldflags -X); empty otherwise.
var (
	version  string // a release tag, such as v0.1.0
	commit   string // the full commit hash
	modified string // "true" or "false"
)

// Dev is the version of a build that knows neither a tag nor a module
// version (go build in a checkout before Go stamps one, go test).
const Dev = "dev"

// Info is what a build knows of itself.
type Info struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified"`
	GoVersion  string `json:"go_version"`
	Platform   string `json:"platform"`
}

// Override is what a release build sets at link time; empty fields leave
// the build's own values.
type Override struct {
	Version, Commit, Modified string
}

// Get is the running binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return From(bi, Override{Version: version, Commit: commit, Modified: modified})
}

// From reads an Info from build information (nil: none) and the link-time
// override.
func From(bi *debug.BuildInfo, ov Override) Info {
	i := Info{Version: Dev, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			i.Version = v
		}
		if bi.GoVersion != "" {
			i.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Commit = s.Value
			case "vcs.time":
				i.CommitTime = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			case "GOOS":
				i.Platform = s.Value + i.Platform[strings.Index(i.Platform, "/"):]
			case "GOARCH":
				i.Platform = i.Platform[:strings.Index(i.Platform, "/")+1] + s.Value
			}
		}
	}
	if ov.Version != "" {
		i.Version = ov.Version
	}
	if ov.Commit != "" {
		i.Commit = ov.Commit
	}
	if ov.Modified != "" {
		i.Modified = ov.Modified == "true"
	}
	return i
}

// String is one line: "corral v0.1.0 (commit 0123abcd4567, modified)
// go1.26.8 linux/amd64". The commit is shortened to 12 characters.
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "corral %s", i.Version)
	switch c := i.Commit; {
	case c != "" && i.Modified:
		fmt.Fprintf(&b, " (commit %s, modified)", short(c))
	case c != "":
		fmt.Fprintf(&b, " (commit %s)", short(c))
	case i.Modified:
		b.WriteString(" (modified)")
	}
	fmt.Fprintf(&b, " %s %s", i.GoVersion, i.Platform)
	return b.String()
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// LogAttrs are the key-value pairs a starting daemon logs its build with.
func (i Info) LogAttrs() []any {
	return []any{"version", i.Version, "commit", i.Commit, "modified", i.Modified, "go", i.GoVersion}
}

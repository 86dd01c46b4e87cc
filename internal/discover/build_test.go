package discover

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// cgoAllowed are the packages outside the standard library that may use
// cgo in corral's build: purego's, which only calls dlopen and its kin
// (and is not built at all with CGO_ENABLED=0). go-nvml's cgo printed 151
// lines of deprecation warnings on a first build.
var cgoAllowed = map[string]bool{
	"github.com/ebitengine/purego/internal/cgo": true,
}

// TestQuietBuild holds corral's first build quiet and cgo-free: no
// package outside the standard library compiles C but purego's, that
// package compiles without a message in a fresh build cache, and
// CGO_ENABLED=0 go build ./cmd/corral succeeds without a message.
// scripts/clean-build.sh checks the whole build in a fresh cache.
func TestQuietBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds corral")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command")
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(goTool, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s go %s: %v\n%s", strings.Join(env, " "), strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	list := run([]string{"CGO_ENABLED=1"}, "list", "-deps", "-f", "{{if and .CgoFiles (not .Standard)}}{{.ImportPath}}{{end}}", "./cmd/corral")
	var cgoPkgs []string
	for _, p := range strings.Fields(list) {
		if !cgoAllowed[p] {
			t.Errorf("%s uses cgo: corral must build without a C compiler's messages and with CGO_ENABLED=0", p)
		}
		cgoPkgs = append(cgoPkgs, p)
	}

	if _, err := exec.LookPath("gcc"); err == nil && len(cgoPkgs) > 0 {
		args := append([]string{"build"}, cgoPkgs...)
		if out := run([]string{"CGO_ENABLED=1", "GOCACHE=" + t.TempDir()}, args...); out != "" {
			t.Errorf("go build %s in a fresh cache printed:\n%s", strings.Join(cgoPkgs, " "), out)
		}
	}

	bin := filepath.Join(t.TempDir(), "corral")
	if out := run([]string{"CGO_ENABLED=0"}, "build", "-o", bin, "./cmd/corral"); out != "" {
		t.Errorf("CGO_ENABLED=0 go build ./cmd/corral printed:\n%s", out)
	}
}

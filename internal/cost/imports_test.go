package cost

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoIO keeps the cost packages pure: they read and write nothing, so
// the simulator, the server and the CLI can all call them. Tests may.
func TestNoIO(t *testing.T) {
	forbidden := map[string]bool{"os": true, "net": true, "net/http": true, "os/exec": true}
	for _, dir := range []string{".", "price", "plan", "tco", "priceimport", "alloc", "focus"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if forbidden[path] {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
}

package scalebench

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsStayLow keeps the driver on the placement core: of corral's
// packages it may import fleet, gang and job only (doc.go), never a face,
// the simulator or the command.
func TestImportsStayLow(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatalf("read the package: %v", err)
	}
	const own = "github.com/corral-sched/corral/"
	allowed := map[string]bool{"internal/fleet": true, "internal/gang": true, "internal/job": true}
	for _, imp := range pkg.Imports {
		if rest, ok := strings.CutPrefix(imp, own); ok && !allowed[rest] {
			t.Errorf("scalebench imports %s; doc.go allows fleet, gang and job only", imp)
		}
		if imp == "os" || imp == "flag" || strings.HasPrefix(imp, "net") {
			t.Errorf("scalebench imports %s: files, flags and the network are the command's", imp)
		}
	}
}

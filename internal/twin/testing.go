package twin

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Scripts lists the twin scripts, for the faces' tests in other packages.
func Scripts(t testing.TB) []string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	paths, err := filepath.Glob(filepath.Join(filepath.Dir(file), "testdata", "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no twin scripts: %v", err)
	}
	return paths
}

// Load parses a script file.
func Load(t testing.TB, path string) *Script {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// Compare fails the test when a transcript differs from the expected one,
// showing both.
func Compare(t testing.TB, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("transcript differs\n--- got\n%s\n--- want\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

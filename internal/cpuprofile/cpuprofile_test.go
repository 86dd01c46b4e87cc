package cpuprofile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStartWritesAProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	stop, err := Start(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("profile %s: %v, %v", path, fi, err)
	}
	if _, err := Start(filepath.Join(t.TempDir(), "missing", "cpu.prof")); err == nil {
		t.Error("a profile into a directory that does not exist started")
	}
}

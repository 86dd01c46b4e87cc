package twin

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected transcripts from the core")

// TestTwinCore runs every script on the core and compares the transcript;
// with -update it writes the core's transcript as the expected one, which
// every face is then held to.
func TestTwinCore(t *testing.T) {
	for _, path := range Scripts(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s := Load(t, path)
			got, err := Run(NewCore(), s)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				rewrite(t, path, got)
				return
			}
			Compare(t, got, s.Want)
		})
	}
}

func rewrite(t *testing.T, path string, got []string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(data), "----\n")
	if err := os.WriteFile(path, []byte(head+"----\n"+strings.Join(got, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParseRefusesUnknownSteps(t *testing.T) {
	if _, err := Parse(strings.NewReader("fly away\n")); err == nil {
		t.Fatal("an unknown step parsed")
	}
}

var _ = slices.Equal[[]string]

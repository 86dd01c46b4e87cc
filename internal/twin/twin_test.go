package twin

import (
	"flag"
	"github.com/corral-sched/corral/internal/sched"
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

// A face that decides one thing otherwise does not pass: preemption off,
// fair share off, one placement attempt a cycle, or gangs on a failed node
// stopped instead of moved each change some script's transcript, and
// every script is changed by one of them.
func TestTwinCatchesAFaceThatDecidesOtherwise(t *testing.T) {
	tweaks := map[string]func(*Core){
		"no preemption":        func(c *Core) { c.tweak = func(c *sched.Config) { c.Preemption = false } },
		"no fair share":        func(c *Core) { c.tweak = func(c *sched.Config) { c.FairShare = false } },
		"one attempt":          func(c *Core) { c.tweak = func(c *sched.Config) { c.Attempts = 1 } },
		"no failed-node moves": func(c *Core) { c.requeueStruck = true },
		"no elastic resizing":  func(c *Core) { c.fixedSize = true },
	}
	byTweak, byScript := map[string]int{}, map[string]int{}
	for _, path := range Scripts(t) {
		s := Load(t, path)
		for name, tweak := range tweaks {
			c := NewCore()
			tweak(c)
			if got, err := Run(c, s); err != nil || !slices.Equal(got, s.Want) {
				byTweak[name]++
				byScript[filepath.Base(path)]++
			}
		}
	}
	for name := range tweaks {
		if byTweak[name] == 0 {
			t.Errorf("a face with %s passes every script", name)
		}
	}
	for _, path := range Scripts(t) {
		if byScript[filepath.Base(path)] == 0 {
			t.Errorf("%s catches none of the changed faces", filepath.Base(path))
		}
	}
}

func TestParseRefusesUnknownSteps(t *testing.T) {
	if _, err := Parse(strings.NewReader("fly away\n")); err == nil {
		t.Fatal("an unknown step parsed")
	}
}

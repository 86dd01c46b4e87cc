package gang

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

var update = flag.Bool("update", false, "rewrite the scenario transcripts in testdata/scenarios")

// A scenario replays a production failure on a fleet: jobs are placed,
// released, nodes fail, and after each step the expectations are checked.
// The transcript of every decision is compared with NAME.golden.
type scenario struct {
	Scenario string `yaml:"scenario"`
	Fleet    string `yaml:"fleet"` // a fleet file
	Steps    []step `yaml:"steps"`
}

type step struct {
	Place   string  `yaml:"place"`   // a job file: the jobs are placed in order
	Release string  `yaml:"release"` // a job name
	Fail    string  `yaml:"fail"`    // a node that fails; its gangs move to spares
	Expect  *expect `yaml:"expect"`
}

type expect struct {
	Placed    []string       `yaml:"placed"`
	Unplaced  []string       `yaml:"unplaced"`
	Reason    string         `yaml:"reason"`    // substring of every unplaced job's reasons
	UsedNodes int            `yaml:"usedNodes"` // nodes with any task, over all jobs
	Span      map[string]int `yaml:"span"`      // most domains any job of this step spans per level
	MaxPerGPU int            `yaml:"maxPerGPU"` // most tasks sharing one GPU, over all jobs
	KeepsBusy bool           `yaml:"keepsBusy"` // every busy MIG instance before the step is still there
	MovedTo   string         `yaml:"movedTo"`   // after fail: the replacement node
	Evicted   []string       `yaml:"evicted"`
}

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) { runScenario(t, file) })
	}
}

func runScenario(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var sc scenario
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&sc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	f, err := fleet.Parse([]byte(sc.Fleet), file+" fleet")
	if err != nil {
		t.Fatal(err)
	}
	s := newState(t, f)
	var out strings.Builder
	fmt.Fprintf(&out, "# %s\n", sc.Scenario)
	for i, st := range sc.Steps {
		busy := busyInstances(s)
		r := runStep(t, s, st, &out)
		if st.Expect != nil {
			checkExpect(t, s, i+1, st.Expect, r)
		}
		if st.Expect != nil && st.Expect.KeepsBusy {
			checkBusyKept(t, s, i+1, busy)
		}
	}
	compareGolden(t, strings.TrimSuffix(file, ".yaml")+".golden", out.String())
}

// stepResult is what one step did.
type stepResult struct {
	placed   []*Placement
	unfit    []*Unfit
	replaced *Replacement
}

func runStep(t *testing.T, s *State, st step, out *strings.Builder) stepResult {
	var r stepResult
	switch {
	case st.Place != "":
		jobs, err := job.Parse([]byte(st.Place), "step")
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			p, u := s.Place(j)
			if u != nil {
				r.unfit = append(r.unfit, u)
				fmt.Fprintf(out, "unfit %s: %s\n", j.Name, u.String())
				continue
			}
			r.placed = append(r.placed, p)
			fmt.Fprintf(out, "place %s: %s\n", j.Name, describePlacement(p))
		}
	case st.Release != "":
		if err := s.Release(st.Release); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(out, "release %s\n", st.Release)
	case st.Fail != "":
		for _, name := range s.Affected(st.Fail) {
			rep, err := s.Replace(name, st.Fail)
			if err != nil {
				fmt.Fprintf(out, "fail %s: %v\n", st.Fail, err)
				continue
			}
			r.replaced = rep
			fmt.Fprintf(out, "fail %s: %s moved to %s (same %s, spare %v, evicted %v)\n",
				st.Fail, rep.Job, rep.To, rep.Level, rep.Spare, rep.Evicted)
		}
	}
	return r
}

// describePlacement prints tasks grouped by node: node[gpus] with MIG and
// share details, then the span.
func describePlacement(p *Placement) string {
	var parts []string
	for _, t := range p.Tasks {
		what := fmt.Sprint(t.GPUs)
		switch {
		case t.MIG != nil:
			what = fmt.Sprintf("gpu%d:%s@%d", t.GPUs[0], t.MIG.Profile, t.MIG.Start)
			if t.MIG.Created {
				what += "+new"
			}
			what += " [" + t.MIG.Layout + "]"
		case t.Milli > 0:
			what = fmt.Sprintf("gpu%d:%dm", t.GPUs[0], t.Milli)
		}
		parts = append(parts, t.NodeName+what)
	}
	return fmt.Sprintf("%s span %v", strings.Join(parts, " "), p.Span)
}

func checkExpect(t *testing.T, s *State, stepNo int, e *expect, r stepResult) {
	t.Helper()
	fail := func(format string, args ...any) { t.Errorf("step %d: "+format, append([]any{stepNo}, args...)...) }
	if got := placementNames(r.placed); e.Placed != nil && !equalStrings(got, e.Placed) {
		fail("placed %v, want %v", got, e.Placed)
	}
	if got := unfitNames(r.unfit); e.Unplaced != nil && !equalStrings(got, e.Unplaced) {
		fail("unplaced %v, want %v", got, e.Unplaced)
	}
	for _, u := range r.unfit {
		if e.Reason != "" && !strings.Contains(u.String(), e.Reason) {
			fail("%s: reasons %q lack %q", u.Job, u.Lines(), e.Reason)
		}
	}
	if e.UsedNodes > 0 && usedNodes(s) != e.UsedNodes {
		fail("%d nodes in use, want %d", usedNodes(s), e.UsedNodes)
	}
	for level, want := range e.Span {
		d, err := s.fleet.LevelIndex(level)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range r.placed {
			if p.Span[d] > want {
				fail("%s spans %d %s domains, want at most %d", p.Job, p.Span[d], level, want)
			}
		}
	}
	if e.MaxPerGPU > 0 && maxPerGPU(s) > e.MaxPerGPU {
		fail("%d tasks share one GPU, want at most %d", maxPerGPU(s), e.MaxPerGPU)
	}
	checkReplacement(t, stepNo, e, r.replaced)
}

func checkReplacement(t *testing.T, stepNo int, e *expect, rep *Replacement) {
	t.Helper()
	if e.MovedTo == "" {
		return
	}
	if rep == nil || rep.To != e.MovedTo {
		t.Errorf("step %d: replacement %+v, want a move to %s", stepNo, rep, e.MovedTo)
		return
	}
	if e.Evicted != nil && !equalStrings(rep.Evicted, e.Evicted) {
		t.Errorf("step %d: evicted %v, want %v", stepNo, rep.Evicted, e.Evicted)
	}
}

func placementNames(ps []*Placement) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Job)
	}
	return out
}

func unfitNames(us []*Unfit) []string {
	out := []string{}
	for _, u := range us {
		out = append(out, u.Job)
	}
	return out
}

func usedNodes(s *State) int {
	used := map[int]bool{}
	for _, p := range s.jobs {
		for _, t := range p.Tasks {
			used[t.Node] = true
		}
	}
	return len(used)
}

func maxPerGPU(s *State) int {
	count := map[[2]int]int{}
	best := 0
	for _, p := range s.jobs {
		for _, t := range p.Tasks {
			for _, g := range t.GPUs {
				count[[2]int{t.Node, g}]++
				best = max(best, count[[2]int{t.Node, g}])
			}
		}
	}
	return best
}

func equalStrings(a, b []string) bool {
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestScenarios -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("transcript differs from %s (rerun with -update if the change is right)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// busyInstances lists every busy MIG instance as node/gpu/profile@start.
func busyInstances(s *State) []string {
	var out []string
	for n := range s.nodes {
		for g, l := range s.nodes[n].layouts {
			for _, in := range l.Instances {
				if in.Busy {
					out = append(out, fmt.Sprintf("%d/%d/%s@%d", n, g, l.Model.Profiles[in.Profile].Name, in.Start))
				}
			}
		}
	}
	return out
}

func checkBusyKept(t *testing.T, s *State, stepNo int, before []string) {
	t.Helper()
	after := map[string]bool{}
	for _, b := range busyInstances(s) {
		after[b] = true
	}
	for _, b := range before {
		if !after[b] {
			t.Errorf("step %d: busy MIG instance %s was changed", stepNo, b)
		}
	}
}

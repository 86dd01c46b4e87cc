package gang

import (
	"slices"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// TestReplaceKeepsTheJobsRequiredTopology moves a gang's task off a
// failed node on a fleet of two blocks of two racks of three 8-GPU nodes
// (n000-n002 rack0 and n003-n005 rack1 in block0; n006-n011 in block1).
// A move looks no wider than the domain the gang must pack in (the whole
// fleet when none), and under a required spread takes no node whose
// domain already holds the gang's allowance; a preferred constraint
// bounds nothing.
func TestReplaceKeepsTheJobsRequiredTopology(t *testing.T) {
	rack := func(required bool) job.Constraint { return job.Constraint{Level: "rack", Required: required} }
	block := job.Constraint{Level: "block", Required: true}
	spread := func(required bool) job.Constraint {
		return job.Constraint{Level: "rack", Spread: true, Required: required}
	}
	cases := []struct {
		name    string
		gang    *job.Job
		on      []string // the nodes the gang's tasks are placed on
		busy    []string // nodes filled before
		fail    string
		want    string // node moved to, or "" for a refusal
		refusal string // in the error, when refused
	}{
		{"packed in a block: moves to the next rack of the block", gpuJob("g", 2, 8, block), []string{"n000", "n001"}, []string{"n002"}, "n001", "n003", ""},
		{"packed in a rack without room: refused", gpuJob("g", 2, 8, rack(true)), []string{"n000", "n001"}, []string{"n002"}, "n001", "", "in its rack can take 1 tasks"},
		{"rack only preferred: moves within the block", gpuJob("g", 2, 8, rack(false)), []string{"n000", "n001"}, []string{"n002"}, "n001", "n003", ""},
		{"packed in a rack with room there", gpuJob("g", 2, 8, rack(true)), []string{"n000", "n001"}, nil, "n001", "n002", ""},
		{"required spread in a block: the rack the other task holds is refused", gpuJob("g", 2, 8, block, spread(true)), []string{"n000", "n003"}, []string{"n001", "n002"}, "n000", "", "with at most 1 of the job's tasks per rack"},
		{"required spread: a rack of the other block is taken", gpuJob("g", 2, 8, spread(true)), []string{"n000", "n003"}, []string{"n001", "n002"}, "n000", "n006", ""},
		{"preferred spread: the rack the other task holds is taken", gpuJob("g", 2, 8, spread(false)), []string{"n000", "n003"}, []string{"n001", "n002"}, "n000", "n004", ""},
		{"no pack level: a node of the other block is taken", gpuJob("g", 2, 8), []string{"n000", "n001"}, []string{"n002", "n003", "n004", "n005"}, "n001", "n006", ""},
		{"required spread: a free node in its own rack is taken", gpuJob("g", 2, 8, spread(true)), []string{"n000", "n003"}, nil, "n000", "n001", ""},
		{"every task on the failed node: the whole job moves", gpuJob("g", 2, 4, job.Constraint{Level: "node", Required: true}), []string{"n000"}, nil, "n000", "n001", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newState(t, grid(t, []string{"block", "rack"}, []int{2, 2}, 3, 8, "H100"))
			for i, n := range c.busy {
				if _, err := s.Adopt(gpuJob("busy"+string(rune('a'+i)), 1, 8), n); err != nil {
					t.Fatal(err)
				}
			}
			placeOn(t, s, c.gang, c.on)
			rep, err := s.Replace("g", c.fail)
			if c.want == "" {
				if err == nil || !strings.Contains(err.Error(), c.refusal) {
					t.Fatalf("moved to %v, err %v; want a refusal saying %q", rep, err, c.refusal)
				}
				if got := nodesOf(s.Job("g")); strings.Join(got, ",") != strings.Join(slices.Compact(slices.Clone(c.on)), ",") {
					t.Errorf("a refused move changed the gang: on %v, want %v", got, c.on)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.To != c.want {
				t.Errorf("moved to %s (%s), want %s", rep.To, rep.Level, c.want)
			}
			for _, n := range nodesOf(s.Job("g")) {
				if n == c.fail {
					t.Errorf("a task stayed on the failed node %s", n)
				}
			}
		})
	}
}

// placeOn places j with only the nodes on open, then opens the others.
func placeOn(t *testing.T, s *State, j *job.Job, on []string) {
	t.Helper()
	var closed []string
	for _, n := range s.Fleet().Nodes {
		if !slices.Contains(on, n.Name) {
			closed = append(closed, n.Name)
		}
	}
	setHealth(t, s, closed, fleet.Unhealthy)
	if _, u := s.Place(j); u != nil {
		t.Fatalf("placing %s on %v: %v", j.Name, on, u)
	}
	setHealth(t, s, closed, fleet.Healthy)
	if got := nodesOf(s.Job(j.Name)); !slices.Equal(got, slices.Compact(slices.Clone(on))) {
		t.Fatalf("%s placed on %v, want %v", j.Name, got, on)
	}
}

func setHealth(t *testing.T, s *State, nodes []string, h fleet.Health) {
	t.Helper()
	for _, n := range nodes {
		if err := s.SetHealth(n, h); err != nil {
			t.Fatal(err)
		}
	}
}

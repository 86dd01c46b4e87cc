package sched

import (
	"fmt"
	"slices"
	"testing"

	"github.com/corral-sched/corral/internal/job"
)

// elasticWorld is two 8-GPU nodes filled by one elastic service of 4
// tasks of 4 GPUs: it started with one task (part "svc") and grew by one
// ("svc+1"), then by two ("svc+2").
func elasticWorld(t *testing.T) *world {
	t.Helper()
	w := newWorld(t, 2, 8)
	for _, p := range []struct {
		name  string
		tasks int
	}{{"svc", 1}, {"svc+1", 1}, {"svc+2", 2}} {
		if _, u := w.state.Place(gpuJob(p.name, p.tasks, 4, 0)); u != nil {
			t.Fatalf("placing %s: %v", p.name, u)
		}
	}
	w.running = append(w.running, Running{Name: "svc", Parts: []string{"svc", "svc+1", "svc+2"}, Grown: []string{"svc+1", "svc+2"},
		GPUs: 16, Started: t0})
	return w
}

// growShape is what an elastic unit named name may still add: missing
// tasks of 4 GPUs, any number of them.
func growShape(name string, missing int) *job.Job {
	j := gpuJob(name, missing, 4, 0)
	j.MinMember, j.Elastic = 1, true
	return j
}

func givenBack(d Decisions) []string {
	var out []string
	for _, g := range d.GiveBacks {
		out = append(out, fmt.Sprintf("%s of %s for %s", g.Part, g.Unit, g.For))
	}
	return out
}

// The first unit that waits for room takes back the fewest grown parts,
// newest first, that let it start now, and starts: it does not wait, and
// holds no reservation. What it does not need stays with the service.
func TestCycleTakesBackWhatElasticUnitsGrewBy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tasks int // of 4 GPUs, asked by the waiting unit
		want  []string
	}{
		{"newest part is enough", 2, []string{"svc+2 of svc for x"}},
		{"both grown parts", 3, []string{"svc+2 of svc for x", "svc+1 of svc for x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := elasticWorld(t).submit(gpuJob("x", tc.tasks, 4, 0), "")
			d := Cycle(w.snapshot(Config{}))
			if got := givenBack(d); !slices.Equal(got, tc.want) {
				t.Fatalf("given back %q, want %q", got, tc.want)
			}
			if !started(d, "x") || len(d.Waiting) != 0 || len(d.Reservations) != 0 {
				t.Fatalf("x should start on the room given back: %q", transcript(d))
			}
			for _, g := range d.GiveBacks {
				if w.state.Job(g.Part) != nil || g.Placement == nil || len(g.Placement.Tasks) == 0 {
					t.Errorf("part %s: still placed (%v) or given back without its placement", g.Part, w.state.Job(g.Part) != nil)
				}
			}
			if w.state.Job("svc") == nil {
				t.Error("the service's first part, which it did not grow by, was taken")
			}
		})
	}
}

// Nothing is taken back for a unit that would not fit even then, nor
// while the cycle stops running work (its room comes first), nor for a
// unit that waits for quota.
func TestCycleTakesNothingBackInVain(t *testing.T) {
	t.Run("too large", func(t *testing.T) {
		w := elasticWorld(t).submit(gpuJob("huge", 4, 4, 0), "")
		d := Cycle(w.snapshot(Config{}))
		if len(d.GiveBacks) != 0 || w.state.Job("svc+2") == nil || w.state.Job("svc+1") == nil {
			t.Fatalf("gave back %q for a unit that still would not fit", givenBack(d))
		}
		if wt, ok := waitOf(d, "huge"); !ok || wt.Code != CodeCapacity {
			t.Fatalf("huge should wait for room: %q", transcript(d))
		}
	})
	t.Run("preempting", func(t *testing.T) {
		w := newWorld(t, 2, 8)
		w.run(gpuJob("low", 1, 8, 0), "", noTime, true)
		for _, p := range []string{"svc", "svc+1"} {
			if _, u := w.state.Place(gpuJob(p, 1, 4, 0)); u != nil {
				t.Fatal(u)
			}
		}
		w.running = append(w.running, Running{Name: "svc", Parts: []string{"svc", "svc+1"}, Grown: []string{"svc+1"}, GPUs: 8, Started: t0})
		// x goes first and waits for room (it never preempts); high
		// stops low.
		w.submit(gpuJob("x", 1, 4, 6), "").submit(gpuJob("high", 1, 8, 5), "")
		w.pending[0].NeverPreempts = true
		d := Cycle(w.snapshot(Config{Preemption: true}))
		if wt, ok := waitOf(d, "x"); !ok || wt.Code != CodeCapacity {
			t.Fatalf("x should wait for room: %q", transcript(d))
		}
		if len(d.Preempts) == 0 {
			t.Fatalf("the scenario needs a preemption: %q", transcript(d))
		}
		if len(d.GiveBacks) != 0 {
			t.Fatalf("gave back %q while work stops", givenBack(d))
		}
	})
	t.Run("quota", func(t *testing.T) {
		w := elasticWorld(t)
		w.book = newWorld(t, 1, 1, quota("team", 4)).book
		w.submit(gpuJob("x", 2, 4, 0), "team")
		d := Cycle(w.snapshot(Config{}))
		if len(d.GiveBacks) != 0 {
			t.Fatalf("gave back %q for a unit its quota holds", givenBack(d))
		}
		if wt, ok := waitOf(d, "x"); !ok || wt.Code != CodeQuota {
			t.Fatalf("x should wait for quota: %q", transcript(d))
		}
	})
}

// When no unit waits, running elastic units below their full size grow,
// in name order, by as many tasks as fit; a unit that waits stops all
// growth, and so does GrowKept unless this cycle started something.
func TestCycleGrowsElasticUnitsWhenNothingWaits(t *testing.T) {
	// a asks for 3 tasks of 4 GPUs in all, b for 2; each runs one.
	setup := func(t *testing.T, nodes int) *world {
		w := newWorld(t, nodes, 8)
		for _, name := range []string{"b", "a"} {
			w.run(gpuJob(name, 1, 4, 0), "", noTime, false)
		}
		w.running[0].Grow = growShape("b+1", 1)
		w.running[1].Grow = growShape("a+1", 2)
		return w
	}
	grows := func(d Decisions) []string {
		var out []string
		for _, g := range d.Grows {
			out = append(out, fmt.Sprintf("%s+%d as %s", g.Unit, len(g.Placement.Tasks), g.Placement.Job))
		}
		return out
	}
	t.Run("full fleet", func(t *testing.T) {
		w := setup(t, 1)
		if d := Cycle(w.snapshot(Config{})); len(d.Grows) != 0 {
			t.Fatalf("grew %q on a full node", grows(d))
		}
	})
	t.Run("in name order", func(t *testing.T) {
		w := setup(t, 2) // 8 GPUs free: a takes them all, b none
		d := Cycle(w.snapshot(Config{}))
		if got, want := grows(d), []string{"a+2 as a+1"}; !slices.Equal(got, want) {
			t.Fatalf("grows %q, want %q", got, want)
		}
		if w.state.Job("a+1") == nil {
			t.Fatal("the grown part is not placed under its name")
		}
	})
	t.Run("partly", func(t *testing.T) {
		w := setup(t, 2)
		if _, u := w.state.Place(gpuJob("other", 1, 4, 0)); u != nil {
			t.Fatal(u)
		}
		d := Cycle(w.snapshot(Config{}))
		if got, want := grows(d), []string{"a+1 as a+1"}; !slices.Equal(got, want) {
			t.Fatalf("grows %q, want %q: a takes the one task that fits", got, want)
		}
	})
	t.Run("a unit waits", func(t *testing.T) {
		w := newWorld(t, 2, 8)
		w.run(gpuJob("a", 1, 4, 0), "", noTime, false)
		w.running[0].Grow = growShape("a+1", 2)
		w.submit(gpuJob("big", 2, 8, 0), "")
		d := Cycle(w.snapshot(Config{}))
		if len(d.Grows) != 0 {
			t.Fatalf("grew %q while big waits: %q", grows(d), transcript(d))
		}
	})
	t.Run("kept", func(t *testing.T) {
		w := newWorld(t, 2, 8)
		w.run(gpuJob("a", 1, 4, 0), "", noTime, false)
		w.running[0].Grow = growShape("a+1", 2)
		snap := w.snapshot(Config{})
		snap.GrowKept = true
		if d := Cycle(snap); len(d.Grows) != 0 {
			t.Fatalf("grew %q though nothing changed since the last try", grows(d))
		}
		w.submit(gpuJob("small", 1, 1, 0), "")
		snap = w.snapshot(Config{})
		snap.GrowKept = true
		if d := Cycle(snap); len(d.Grows) != 1 || !started(d, "small") {
			t.Fatalf("a cycle that started small should try to grow a: %q, grows %q", transcript(d), grows(d))
		}
	})
}

// The memory keeps that growth was tried only for a cycle in which no
// unit waited, started or took grown parts back, and only while the
// face's state stays as it settled.
func TestMemoryKeepsGrowthTried(t *testing.T) {
	m := NewVolatileMemory()
	at := Settled{Version: 7}
	m.Reserved(Decisions{})
	m.Settle(at)
	if !m.GrowKept(at) || m.GrowKept(Settled{Version: 8}) || m.GrowKept(Settled{Version: 7, HealthChanges: 1}) {
		t.Fatal("growth tried at version 7 should hold there only")
	}
	for name, d := range map[string]Decisions{
		"a wait":    {Waiting: []Wait{{Unit: "x"}}},
		"a start":   {Starts: []Start{{Unit: &Unit{Job: gpuJob("x", 1, 1, 0)}}}},
		"give back": {GiveBacks: []GiveBack{{Unit: "svc", Part: "svc+1", For: "x"}}},
	} {
		m.Reserved(d)
		m.Settle(at)
		if m.GrowKept(at) {
			t.Errorf("after a cycle with %s, growth should be tried again", name)
		}
	}
}

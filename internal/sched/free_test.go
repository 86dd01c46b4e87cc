package sched

import (
	"slices"
	"strings"
	"testing"
)

// A unit the face's rules keep off every node (a host port, an
// anti-affinity) is offered ways to free a node; the cycle stops the
// cheapest way's victims, kube-scheduler's way: lowest highest priority,
// then fewest victims.
func TestCycleFreesANodeTheFiltersRefuse(t *testing.T) {
	blocked := func(freeing ...Freeing) Unit {
		return Unit{Job: gpuJob("web", 1, 1, 100), Blocked: "0/2 nodes are available: 2 node(s) didn't have free ports", Freeing: [][]Freeing{freeing}}
	}
	tests := []struct {
		name    string
		unit    func() Unit
		cfg     Config
		claimed bool
		want    []string // the transcript
		reason  string   // in the unit's wait
	}{
		{name: "the node whose victims have the lowest priority",
			unit: func() Unit { return blocked(Freeing{"node-0", []string{"mid"}}, Freeing{"node-1", []string{"low"}}) },
			cfg:  Config{Preemption: true},
			want: []string{"preempt low for web", "reserve web releasing [low]", "wait web preempting"}, reason: "on node-1"},
		{name: "then the fewest victims",
			unit: func() Unit {
				return blocked(Freeing{"node-0", []string{"low", "low2"}}, Freeing{"node-1", []string{"low3"}})
			},
			cfg:  Config{Preemption: true},
			want: []string{"preempt low3 for web", "reserve web releasing [low3]", "wait web preempting"}},
		{name: "never work of its own priority or above",
			unit: func() Unit { return blocked(Freeing{"node-0", []string{"top"}}) },
			cfg:  Config{Preemption: true},
			want: []string{"wait web capacity"}, reason: "didn't have free ports"},
		{name: "a way with a victim it may not stop is no way",
			unit: func() Unit {
				return blocked(Freeing{"node-0", []string{"low", "top"}}, Freeing{"node-1", []string{"mid"}})
			},
			cfg:  Config{Preemption: true},
			want: []string{"preempt mid for web", "reserve web releasing [mid]", "wait web preempting"}},
		{name: "without preemption it waits for room, as the autoscaler should read it",
			unit: func() Unit { return blocked(Freeing{"node-1", []string{"low"}}) },
			want: []string{"wait web capacity"}},
		{name: "preemptionPolicy Never",
			unit: func() Unit { u := blocked(Freeing{"node-1", []string{"low"}}); u.NeverPreempts = true; return u },
			cfg:  Config{Preemption: true},
			want: []string{"wait web capacity"}},
		{name: "the budget",
			unit: func() Unit { return blocked(Freeing{"node-0", []string{"low", "low2"}}) },
			cfg:  Config{Preemption: true, PreemptionBudget: 1},
			want: []string{"wait web capacity"}, reason: "budget"},
		{name: "work stopped for it already is waited for, not added to",
			unit:    func() Unit { u := blocked(Freeing{"node-1", []string{"low"}}); u.Claimed = true; return u },
			cfg:     Config{Preemption: true},
			claimed: true,
			want:    []string{"wait web preempting"}, reason: "waiting for the work stopped for it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, 2, 8)
			w.run(gpuJob("low", 1, 1, 1), "", noTime, true).run(gpuJob("low2", 1, 1, 1), "", noTime, true).
				run(gpuJob("low3", 1, 1, 1), "", noTime, true).run(gpuJob("mid", 1, 1, 50), "", noTime, true).
				run(gpuJob("top", 1, 1, 100), "", noTime, true)
			if tt.claimed {
				w.running[0].StoppingFor = "-"
			}
			w.pending = append(w.pending, tt.unit())
			d := Cycle(w.snapshot(tt.cfg))
			if got := transcript(d); !slices.Equal(got, tt.want) {
				t.Errorf("decisions %q, want %q", got, tt.want)
			}
			if wt, _ := waitOf(d, "web"); !strings.Contains(wt.Reason, tt.reason) {
				t.Errorf("reason %q, want it to say %q", wt.Reason, tt.reason)
			}
		})
	}
}

// A unit of two blocked tasks frees a node for each: the cheapest for the
// first, the cheapest of the others for the second.
func TestCycleFreesANodeForEachBlockedTask(t *testing.T) {
	w := newWorld(t, 2, 8)
	w.run(gpuJob("low", 1, 1, 1), "", noTime, true).run(gpuJob("mid", 1, 1, 50), "", noTime, true)
	ways := []Freeing{{"node-0", []string{"low"}}, {"node-1", []string{"mid"}}}
	w.pending = append(w.pending, Unit{Job: gpuJob("web", 2, 1, 100), Blocked: "ports", Freeing: [][]Freeing{ways, ways}})
	d := Cycle(w.snapshot(Config{Preemption: true}))
	want := []string{"preempt low for web", "preempt mid for web", "reserve web releasing [low mid]", "wait web preempting"}
	if got := transcript(d); !slices.Equal(got, want) {
		t.Errorf("decisions %q, want %q", got, want)
	}
	if wt, _ := waitOf(d, "web"); !strings.Contains(wt.Reason, "on node-0, node-1") {
		t.Errorf("reason %q, want both nodes", wt.Reason)
	}
}

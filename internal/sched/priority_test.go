package sched

import (
	"strings"
	"testing"
)

// With PriorityWithinQueue, a unit's priority stops only its own
// queue's lower-priority work: another queue's work inside that queue's
// own quota is never stopped for it, whatever number it set.
func TestPriorityWithinQueue(t *testing.T) {
	for _, tc := range []struct {
		name   string
		within bool
		queue  string
		want   string // the victim's name prefix, or "" for none
	}{
		{"across queues, priority preempts when not bounded", false, "b", "a-low"},
		{"across queues, priority never preempts when bounded", true, "b", ""},
		{"within a queue, priority still preempts", true, "a", "a-low"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 1, 4, quota("a", 4), quota("b", 4))
			w.runMany("a-low", 4, 0, "a", true)
			w.submit(gpuJob("urgent", 1, 1, 1000), tc.queue)
			d := Cycle(w.snapshot(Config{Preemption: true, Reclaim: true, FairShare: true, PriorityWithinQueue: tc.within}))
			switch {
			case tc.want == "" && len(d.Preempts) > 0:
				t.Errorf("preempts %v for a unit of queue %s", d.Preempts, tc.queue)
			case tc.want != "" && (len(d.Preempts) != 1 || !strings.HasPrefix(d.Preempts[0].Victim, tc.want)):
				t.Errorf("preempts %v, want one of %s*", d.Preempts, tc.want)
			}
		})
	}
}

package kube

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// A pod the filter plugins refused where the core placed it, beside pods
// placed earlier in the same cycle, is not bound; the next cycle's core
// places its unit knowing it (filters.go). Refused beside none of its own
// unit's pods, the pod may not go to that node; refused beside k of them
// (devices, ports or pod counts a node has for k of the unit's pods, and
// the core does not count), the unit places at most k pods a node. The
// refusals of a unit are kept while every cycle refuses it again (each
// adds what it learnt) and forgotten at the first cycle that does not:
// one that starts the unit, or in which it waits for another reason. A
// refusal that no longer holds, such as a shared claim that was being
// written, or a node that has since gained devices, then rules out
// nothing.

// refusal is where one pod of a unit was refused: nodes it may not go
// to, and the fewest pods of its unit a node took before refusing it (0:
// none).
type refusal struct {
	unit  string
	nodes []string
	cap   int
}

// refusedNodes are what the next cycle knows of the refusals: nodes ruled
// out per pending pod, and pods a node per unit.
type refusedNodes struct {
	pods map[types.UID][]string
	caps map[string]int // unit (core job name) -> pods a node
}

// add takes one pending pod's refusal into what the next cycle knows.
func (r refusedNodes) add(uid types.UID, f refusal) {
	if len(f.nodes) > 0 {
		r.pods[uid] = f.nodes
	}
	if c, ok := r.caps[f.unit]; f.cap > 0 && (!ok || f.cap < c) {
		r.caps[f.unit] = f.cap
	}
}

// rememberRefusals keeps a cycle's refusals and forgets those of units it
// did not refuse.
func (s *Scheduler) rememberRefusals(refusals map[string]podRefusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	units := map[string]bool{}
	for _, r := range refusals {
		units[r.unit] = true
	}
	maps.DeleteFunc(s.refusals, func(_ types.UID, r refusal) bool { return !units[r.unit] })
	for _, uid := range slices.Sorted(maps.Keys(refusals)) {
		pr := refusals[uid]
		r := s.refusals[types.UID(uid)]
		r.unit = pr.unit
		switch {
		case pr.besideOwn == 0:
			r.nodes = append(r.nodes, pr.node)
		case r.cap == 0 || pr.besideOwn < r.cap:
			r.cap = pr.besideOwn
		}
		s.refusals[types.UID(uid)] = r
	}
}

// podRefusal is one cycle's refusal of a pod: its unit, the node, and how
// many of its unit's pods the cycle had placed there before it.
type podRefusal struct {
	unit, node string
	besideOwn  int
}

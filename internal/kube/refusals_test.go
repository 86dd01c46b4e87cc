package kube

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/sched"
)

// Refusals rule out a node for a pod refused beside none of its unit,
// cap the pods a node for a unit refused beside its own, pile up while
// each cycle refuses the unit again, and are forgotten at the first cycle
// that does not, or once the pod is bound.
func TestRefusalsKeptWhileRefused(t *testing.T) {
	s := &Scheduler{refusals: map[types.UID]refusal{}, units: sched.NewMemory(), podsNow: newLivePods(), assumed: map[string]string{}}
	recall := func(pods []*corev1.Pod) memory {
		s.podsNow.reset(pods)
		return s.recall()
	}
	pending := func(names ...string) []*corev1.Pod {
		var out []*corev1.Pod
		for _, n := range names {
			out = append(out, &corev1.Pod{})
			out[len(out)-1].UID = types.UID(n)
		}
		return out
	}
	s.rememberRefusals(map[string]podRefusal{"a": {unit: "u", node: "n1"}, "c": {unit: "w", node: "n1", besideOwn: 2}})
	got := recall(pending("a", "c")).refused
	if !slices.Equal(got.pods["a"], []string{"n1"}) || got.caps["w"] != 2 || len(got.pods["c"]) != 0 {
		t.Fatalf("after one cycle: %+v", got)
	}
	// u is refused again elsewhere; w is not refused this cycle.
	s.rememberRefusals(map[string]podRefusal{"a": {unit: "u", node: "n2"}})
	got = recall(pending("a", "c")).refused
	if !slices.Equal(got.pods["a"], []string{"n1", "n2"}) || len(got.caps) != 0 {
		t.Fatalf("after a second cycle: %+v, want a kept off n1 and n2, w forgotten", got)
	}
	bound := pending("a")
	bound[0].Spec.NodeName = "n3"
	if got := recall(bound).refused; len(got.pods) != 0 {
		t.Fatalf("a bound pod's refusals are still used: %+v", got)
	}
	s.rememberRefusals(nil)
	if got := recall(pending("a")).refused; len(got.pods) != 0 {
		t.Fatalf("a cycle without refusals left %+v", got)
	}
}

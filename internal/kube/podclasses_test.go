package kube

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestPodClassesFollowChanges tells kept classes only the pods that
// changed, as the informer does, through every kind of change a pod goes
// through (created, gated and ungated, bound, assumed bound and
// forgotten, marked for deletion, ended, deleted, handed to another
// scheduler, moved into a pod group), and holds them to classes made
// afresh from the whole list after each change.
func TestPodClassesFollowChanges(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 3))
		pods := map[types.UID]*corev1.Pod{}
		assumed := map[string]string{}
		kept := newPodClasses(DefaultSchedulerName)
		var changes int
		for step := range 400 {
			uid, p := randomChange(rng, pods, assumed, step)
			if p == nil {
				delete(pods, uid)
			} else {
				pods[uid] = p
			}
			node := ""
			if p != nil {
				if node = p.Spec.NodeName; node == "" {
					node = assumed[string(uid)]
				}
			}
			kept.set(uid, p, node)
			for a := range assumed { // an assumption dropped or added: that pod is classed again
				if q := pods[types.UID(a)]; q != nil && q.Spec.NodeName == "" {
					kept.set(q.UID, q, a2n(assumed, q))
				}
			}
			changes++
			fresh := classesOf(DefaultSchedulerName, slices.Collect(maps.Values(pods)), assumed)
			if got, want := classesText(kept), classesText(fresh); got != want {
				t.Fatalf("seed %d step %d: kept classes\n%s\nfresh classes\n%s", seed, step, got, want)
			}
		}
		if len(kept.takeChanged()) == 0 {
			t.Fatalf("seed %d: no bound pod changed in %d changes", seed, changes)
		}
	}
}

func a2n(assumed map[string]string, p *corev1.Pod) string { return assumed[string(p.UID)] }

// randomChange changes one pod of pods (or adds one), and returns it; nil
// for a pod deleted. assumed is changed in place.
func randomChange(rng *rand.Rand, pods map[types.UID]*corev1.Pod, assumed map[string]string, step int) (types.UID, *corev1.Pod) {
	uids := slices.Sorted(maps.Keys(pods))
	if len(uids) == 0 || rng.IntN(4) == 0 {
		p := pod(fmt.Sprintf("p-%03d", step), 1+rng.IntN(4))
		p.Namespace, p.UID = "classes", types.UID(fmt.Sprintf("u-%03d", step))
		if rng.IntN(3) == 0 {
			p = inGroup(p, fmt.Sprintf("g-%d", rng.IntN(3)))
		}
		if rng.IntN(5) == 0 {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "wait"}}
		}
		return p.UID, p
	}
	uid := uids[rng.IntN(len(uids))]
	c := pods[uid].DeepCopy()
	switch rng.IntN(9) {
	case 0:
		delete(assumed, string(uid))
		return uid, nil
	case 1:
		c.Spec.NodeName = fmt.Sprintf("node-%d", rng.IntN(4))
	case 2:
		assumed[string(uid)] = fmt.Sprintf("node-%d", rng.IntN(4))
		return uid, pods[uid]
	case 3:
		delete(assumed, string(uid))
		return uid, pods[uid]
	case 4:
		now := metav1.Now()
		c.DeletionTimestamp = &now
	case 5:
		c.Status.Phase = []corev1.PodPhase{corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed}[rng.IntN(3)]
	case 6:
		c.Spec.SchedulingGates = nil
	case 7:
		c.Spec.SchedulerName = []string{"default-scheduler", DefaultSchedulerName}[rng.IntN(2)]
	case 8:
		c = inGroup(c, fmt.Sprintf("g-%d", rng.IntN(3)))
	}
	return uid, c
}

// classesText is the classes as text: each pod's class and node, and the
// member counts.
func classesText(c *podClasses) string {
	s := ""
	for _, uid := range slices.Sorted(maps.Keys(c.of)) {
		e := c.of[uid]
		s += fmt.Sprintf("%s %d %q %s\n", uid, e.class, e.node, e.member)
	}
	for _, p := range c.pendingPods() {
		s += "pending " + p.Name + "\n"
	}
	for _, p := range c.gatedPods() {
		s += "gated " + p.Name + "\n"
	}
	for _, uid := range slices.Sorted(maps.Keys(c.bound)) {
		s += fmt.Sprintf("bound %s on %s\n", uid, c.bound[uid].node)
	}
	return s + fmt.Sprintf("members %v %v\n", c.members.bound, c.members.gated)
}

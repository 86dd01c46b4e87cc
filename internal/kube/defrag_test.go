package kube

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/sched"
)

// movablePod is a 4-GPU pod bound to node, started at minute 0, that runs
// for at most 20 hours and checkpoints every 30 minutes; owned says
// whether a controller (a ReplicaSet) owns it.
func movablePod(name, node string, owned bool) *corev1.Pod {
	p := fakePod(name, 4, 0)
	p.Spec.NodeName = node
	deadline := int64(20 * 3600)
	p.Spec.ActiveDeadlineSeconds = &deadline
	p.Annotations = map[string]string{AnnotationCheckpointEvery: "30m"}
	if owned {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs", Controller: &yes}}
	}
	return p
}

// Two 8-GPU nodes each half held by a 4-GPU pod that checkpoints: an
// 8-GPU pod waits until one of them ends in 20 hours, unless
// defragmentation evicts one (its controller starts it again in the other
// node's free half). Bare pods, pods without the annotation, and a cycle
// with no moves left evict nothing.
func TestDecideMovesACheckpointingPodForAWholeNode(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC) // ten minutes after the small pods started
	for _, tc := range []struct {
		name   string
		defrag *sched.Defrag
		owned  bool
		ann    bool
		moved  bool
	}{
		{"moves", &sched.Defrag{Moves: 4}, true, true, true},
		{"off", nil, true, true, false},
		{"no moves left", &sched.Defrag{Moves: 0}, true, true, false},
		{"bare pods", &sched.Defrag{Moves: 4}, false, true, false},
		{"no checkpoint annotation", &sched.Defrag{Moves: 4}, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			small := []*corev1.Pod{movablePod("s1", "n0", tc.owned), movablePod("s2", "n1", tc.owned)}
			if !tc.ann {
				for _, p := range small {
					p.Annotations = nil
				}
			}
			pods := append(small, fakePod("big", 8, 5))
			cfg := (&Config{}).withDefaults()
			snap, err := takeSnapshot(&cfg, h100Nodes(2), pods, nil, nil, quietLog())
			if err != nil {
				t.Fatal(err)
			}
			snap.now, snap.defrag = start, tc.defrag
			d := decide(snap, buildUnits(snap.pending, nil, snap.members), true)
			if len(d.binds) != 0 {
				t.Fatalf("binds %v: big fits nowhere yet", d.binds)
			}
			if !tc.moved {
				if len(d.preempts) != 0 {
					t.Fatalf("evicted %v", d.preempts[0].pods)
				}
				return
			}
			if len(d.preempts) != 1 || !d.preempts[0].move || len(d.preempts[0].pods) != 1 {
				t.Fatalf("preempts %+v, want one move of one pod", d.preempts)
			}
			if got := d.preempts[0].pods[0].Name; got != "s1" && got != "s2" {
				t.Errorf("moved %s", got)
			}
			if r := d.preempts[0].reason; !strings.Contains(r, "moving 1 pods out of its way") {
				t.Errorf("reason %q", r)
			}
			if msg := d.rejects[0].message; !strings.Contains(msg, "it gains 158.7 GPU-hours by starting now, they lose 1.0") {
				t.Errorf("big's message %q does not give the gain", msg)
			}
		})
	}
}

// A pod that says when it last checkpointed (corral.sh/checkpoint-time)
// loses its work since then: s2, which checkpointed a minute ago, is the
// cheaper to move (4 GPUs x (1 + 5) minutes), where the periodic reckoning
// makes both lose 10 minutes and moves s1. A time from before the pod
// started, or none on one pod of a unit, is not used.
func TestDecideMovesThePodThatCheckpointedLast(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)
	s1, s2 := movablePod("s1", "n0", true), movablePod("s2", "n1", true)
	s2.Annotations[AnnotationCheckpointTime] = start.Add(-time.Minute).Format(time.RFC3339)
	s1.Annotations[AnnotationCheckpointTime] = "2025-12-31T00:00:00Z" // an earlier run's
	cfg := (&Config{}).withDefaults()
	snap, err := takeSnapshot(&cfg, h100Nodes(2), []*corev1.Pod{s1, s2, fakePod("big", 8, 5)}, nil, nil, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	snap.now, snap.defrag = start, &sched.Defrag{Moves: 4}
	d := decide(snap, buildUnits(snap.pending, nil, snap.members), true)
	if len(d.preempts) != 1 || len(d.preempts[0].pods) != 1 || d.preempts[0].pods[0].Name != "s2" {
		t.Fatalf("preempts %+v, want s2 moved", d.preempts)
	}
	if msg := d.rejects[0].message; !strings.Contains(msg, "they lose 0.4") {
		t.Errorf("big's message %q, want a loss of 0.4 GPU-hours", msg)
	}
}

func TestCheckpointEveryAnnotation(t *testing.T) {
	for _, tc := range []struct {
		value string
		owned bool
		want  time.Duration
	}{
		{"30m", true, 30 * time.Minute},
		{"1h30m", true, 90 * time.Minute},
		{"30m", false, 0}, // nothing would start it again
		{"", true, 0},
		{"30", true, 0},
		{"-5m", true, 0},
		{"soon", true, 0},
	} {
		p := movablePod("p", "n0", tc.owned)
		p.Annotations[AnnotationCheckpointEvery] = tc.value
		if got := checkpointEvery(p); got != tc.want {
			t.Errorf("%q (owned %v): %v, want %v", tc.value, tc.owned, got, tc.want)
		}
	}
}

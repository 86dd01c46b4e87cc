package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestPendingMessageWordsTheFacesTaints checks that a pod kept off nodes
// by a taint this face adds for the core (a node selector, DRA-only GPUs)
// is told what keeps it off, not of a taint kubectl describe node does not
// show; a node's own taint keeps the core's words.
func TestPendingMessageWordsTheFacesTaints(t *testing.T) {
	cases := []struct {
		name  string
		nodes func() []*corev1.Node
		pod   func() *corev1.Pod
		want  string
	}{
		{
			name:  "node selector no node matches",
			nodes: func() []*corev1.Node { return h100Nodes(2) },
			pod: func() *corev1.Pod {
				p := fakePod("picky", 1, 0)
				p.Spec.NodeSelector = map[string]string{"pool": "c"}
				return p
			},
			want: "picky: needs 1 GPU; the fleet has room for 0 GPUs now; 2 nodes: node does not match the pod's nodeSelector pool=c",
		},
		{
			name: "DRA-only GPUs beside a full node",
			nodes: func() []*corev1.Node {
				nodes := h100Nodes(2)
				nodes[0].Labels[labelDRAOnly] = "true"
				return nodes
			},
			pod: func() *corev1.Pod { return fakePod("big", 9, 0) },
			want: "big: needs 9 GPUs (1 task of 9); the fleet has room for 0 GPUs (0 tasks of 9) now; " +
				"1 node: node offers its GPUs only through DRA (ResourceClaims), which the pod does not use; 1 node: not enough free GPU capacity",
		},
		{
			name: "a node's own taint",
			nodes: func() []*corev1.Node {
				nodes := h100Nodes(1)
				nodes[0].Spec.Taints = []corev1.Taint{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
				return nodes
			},
			pod:  func() *corev1.Pod { return fakePod("guest", 1, 0) },
			want: "guest: needs 1 GPU; the fleet has room for 0 GPUs now; 1 node: node has a taint the job does not tolerate",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, rejects := runDecide(t, c.nodes(), []*corev1.Pod{c.pod()}, nil)
			if len(rejects) != 1 || !strings.HasPrefix(rejects[0], c.want) {
				t.Errorf("rejects %q\nwant one starting %q", rejects, c.want)
			}
		})
	}
}

package upstream

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// keptWorld is a small cluster that changes from view to view the ways a
// live one does: nodes come, go, are relabelled, tainted and cordoned;
// pods are bound, end, and are assumed bound (copies with their node set).
type keptWorld struct {
	rng     *rand.Rand
	nodes   []*corev1.Node
	pods    []*corev1.Pod // bound or assumed, spec.nodeName set
	version int
	next    int
}

func (w *keptWorld) bump(m *metav1.ObjectMeta) {
	w.version++
	m.ResourceVersion = fmt.Sprint(w.version)
}

func (w *keptWorld) node(i int) *corev1.Node {
	n := benchNodes(1)[0]
	n.Name = fmt.Sprintf("node-%03d", i)
	n.Status.Allocatable["example.com/nic"] = resource.MustParse("4")
	n.Labels = map[string]string{"kubernetes.io/hostname": n.Name, "zone": fmt.Sprintf("z%d", i%3)}
	w.bump(&n.ObjectMeta)
	return n
}

// worldPod is a pod of one of a few shapes: plain, anti-affine to its
// app, spread over zones, or with a host port.
func (w *keptWorld) pod(shape int) *corev1.Pod {
	w.next++
	p := benchPod(w.next, false)
	p.Labels["app"] = fmt.Sprintf("app-%d", shape%3)
	switch shape % 4 {
	case 1:
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}, TopologyKey: "kubernetes.io/hostname"}}}}
	case 2:
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone",
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}}}
	case 3:
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
	}
	p.Spec.Containers[0].Resources.Requests["example.com/nic"] = resource.MustParse("1")
	w.bump(&p.ObjectMeta)
	return p
}

// step changes the world at random.
func (w *keptWorld) step() {
	for range 1 + w.rng.IntN(6) {
		switch w.rng.IntN(9) {
		case 0: // a node comes
			w.next++
			w.nodes = append(w.nodes, w.node(w.next))
		case 1: // a node goes
			if len(w.nodes) > 2 {
				i := w.rng.IntN(len(w.nodes))
				w.nodes = slices.Delete(w.nodes, i, i+1)
			}
		case 2: // a node is tainted, cordoned or relabelled
			i := w.rng.IntN(len(w.nodes))
			n := w.nodes[i].DeepCopy()
			switch w.rng.IntN(3) {
			case 0:
				n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
			case 1:
				n.Spec.Unschedulable = !n.Spec.Unschedulable
			case 2:
				n.Labels["zone"] = fmt.Sprintf("z%d", w.rng.IntN(3))
			}
			w.bump(&n.ObjectMeta)
			w.nodes[i] = n
		case 3, 4, 5: // a pod is bound
			p := w.pod(w.rng.IntN(8))
			if p.Spec.NodeName = w.nodeFor(p); p.Spec.NodeName != "" {
				w.pods = append(w.pods, p)
			}
		case 6: // a pod ends
			if len(w.pods) > 0 {
				i := w.rng.IntN(len(w.pods))
				w.pods = slices.Delete(w.pods, i, i+1)
			}
		case 7: // a pod assumed on one node is seen bound on another
			if len(w.pods) > 0 {
				i := w.rng.IntN(len(w.pods))
				c := w.pods[i].DeepCopy()
				if c.Spec.NodeName = w.nodeFor(c); c.Spec.NodeName != "" {
					w.pods[i] = c
				}
			}
		case 8: // a pod is updated, or copied at its version
			if len(w.pods) > 0 {
				i := w.rng.IntN(len(w.pods))
				c := w.pods[i].DeepCopy()
				if w.rng.IntN(2) == 0 {
					c.Labels["app"] = fmt.Sprintf("app-%d", w.rng.IntN(3))
					w.bump(&c.ObjectMeta)
				}
				w.pods[i] = c
			}
		}
	}
}

// nodeFor is a node at random for p, where a kubelet would run it: two
// pods with one host port never share a node (upstream's NodeInfo
// counts a port once, however many pods use it).
func (w *keptWorld) nodeFor(p *corev1.Pod) string {
	n := w.nodes[w.rng.IntN(len(w.nodes))].Name
	if len(p.Spec.Containers[0].Ports) == 0 {
		return n
	}
	for _, o := range w.pods {
		if o.UID != p.UID && o.Spec.NodeName == n && len(o.Spec.Containers[0].Ports) > 0 {
			return ""
		}
	}
	return n
}

// verdicts are the plugins' verdicts on pods of every shape on view, then
// on each again after the first of each shape is placed where allowed.
func verdicts(t *testing.T, v *View, w *keptWorld, shapes []*corev1.Pod) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, p := range shapes {
		got := v.Allowed(ctx, p)
		out = append(out, fmt.Sprint(got.Nodes, got.Why(len(w.nodes))))
		if len(got.Nodes) > 0 {
			if err := v.Place(ctx, p, got.Nodes[len(got.Nodes)/2]); err != nil {
				t.Fatalf("placing %s where allowed: %v", p.Name, err)
			}
		}
	}
	for _, p := range shapes {
		got := v.Allowed(ctx, p)
		out = append(out, fmt.Sprint(got.Nodes, got.Why(len(w.nodes))))
	}
	return out
}

// A kept view decides as one built afresh, cycle after cycle of a
// changing cluster, pods placed in each view included (the next view
// forgets them); told the whole list each time (NewView), or only the
// pods that changed (NewViewOf), as the scheduler tells it.
func TestKeptViewFiltersAsAFreshOne(t *testing.T) {
	kept, fresh, told := newTestFramework(t), newTestFramework(t), newTestFramework(t)
	last := map[types.UID]*corev1.Pod{} // the pods told's last view was told of
	fulls, moved := 0, 0
	for seed := range uint64(6) {
		w := &keptWorld{rng: rand.New(rand.NewPCG(seed, 7))}
		for i := range 8 {
			w.nodes = append(w.nodes, w.node(i))
		}
		var shapes []*corev1.Pod
		for s := range 8 {
			p := w.pod(s)
			p.UID = types.UID(fmt.Sprintf("pending-%d", s))
			shapes = append(shapes, p)
		}
		for cycle := range 60 {
			before := nodeNames(w.nodes)
			w.step()
			if !slices.Equal(nodeNames(w.nodes), before) || cycle == 0 {
				moved++ // nodes came or went: every pod is compared
			}
			want := verdicts(t, fresh.freshView(w.nodes, w.pods), w, shapes)
			got := verdicts(t, kept.NewView(w.nodes, w.pods), w, shapes)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d cycle %d: kept view's verdicts\n%v\nfresh view's\n%v", seed, cycle, got, want)
			}
			all := func() []*corev1.Pod { fulls++; return w.pods }
			if got := verdicts(t, told.NewViewOf(w.nodes, podChanges(last, w.pods), all), w, shapes); !slices.Equal(got, want) {
				t.Fatalf("seed %d cycle %d: the view told the pods changed gave\n%v\nfresh view's\n%v", seed, cycle, got, want)
			}
		}
		on := 0
		for _, p := range w.pods {
			if slices.ContainsFunc(w.nodes, func(n *corev1.Node) bool { return n.Name == p.Spec.NodeName }) {
				on++
			}
		}
		if n := len(kept.kept.pods); n != on {
			t.Fatalf("seed %d: the kept cluster holds %d pods, the world %d on its nodes", seed, n, on)
		}
		if n := len(told.kept.pods); n != on {
			t.Fatalf("seed %d: the cluster told the changes holds %d pods, the world %d on its nodes", seed, n, on)
		}
	}
	if fulls > moved {
		t.Errorf("the view told the changes listed every pod in %d of %d views, where nodes came or went in %d", fulls, 6*60, moved)
	}
	t.Logf("every pod listed in %d of %d views (nodes came or went in %d)", fulls, 6*60, moved)
}

func nodeNames(nodes []*corev1.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	slices.Sort(out)
	return out
}

// podChanges is what changed from last to pods, as an informer tells it;
// last becomes pods.
func podChanges(last map[types.UID]*corev1.Pod, pods []*corev1.Pod) []PodChange {
	var out []PodChange
	now := map[types.UID]bool{}
	for _, p := range pods {
		now[p.UID] = true
		if last[p.UID] != p {
			out = append(out, PodChange{UID: p.UID, Pod: p})
			last[p.UID] = p
		}
	}
	for uid := range last {
		if !now[uid] {
			out = append(out, PodChange{UID: uid})
			delete(last, uid)
		}
	}
	if out == nil {
		out = []PodChange{}
	}
	return out
}

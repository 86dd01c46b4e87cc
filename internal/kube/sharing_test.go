package kube

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/kube/kubetest"
)

func resPod(name, res string, n int) *corev1.Pod {
	return podWith(name, corev1.ResourceList{
		corev1.ResourceCPU:       resource.MustParse("100m"),
		corev1.ResourceName(res): *resource.NewQuantity(int64(n), resource.DecimalSI),
	})
}

// The device plugin's mixed strategy: each A100 cut into one 3g.40gb and
// three 1g.10gb instances, offered as nvidia.com/mig-<profile>.
func TestMIGMixedStrategy(t *testing.T) {
	e := newEnv(t)
	e.nodeSpec(kubetest.Node{Name: "mig-0", Labels: map[string]string{
		kubetest.LabelProduct: "NVIDIA-A100-SXM4-80GB", kubetest.LabelCount: "2", "nvidia.com/mig.strategy": "mixed"},
		Resources: map[string]string{"nvidia.com/mig-3g.40gb": "2", "nvidia.com/mig-1g.10gb": "6"}})
	e.start(e.config())
	var small []string
	for i := range 6 {
		small = append(small, fmt.Sprintf("small-%d", i))
		e.create(resPod(small[i], "nvidia.com/mig-1g.10gb", 1))
	}
	e.create(resPod("mid-0", "nvidia.com/mig-3g.40gb", 1), resPod("mid-1", "nvidia.com/mig-3g.40gb", 1))
	e.waitBound(append(small, "mid-0", "mid-1")...)
	e.create(resPod("small-6", "nvidia.com/mig-1g.10gb", 1))
	e.waitUnschedulable("small-6", "not enough free GPU capacity")
	e.create(resPod("whole", "nvidia.com/gpu", 1))
	e.waitUnschedulable("whole", "GPUs are partitioned with a fixed MIG layout")
}

// The single strategy: every MIG device is offered as nvidia.com/gpu.
func TestMIGSingleStrategy(t *testing.T) {
	e := newEnv(t)
	e.nodeSpec(kubetest.Node{Name: "single-0", GPUs: 7, Product: "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
		Labels: map[string]string{"nvidia.com/mig.strategy": "single"}})
	e.start(e.config())
	var names []string
	for i := range 7 {
		names = append(names, fmt.Sprintf("slice-%d", i))
		e.create(resPod(names[i], "nvidia.com/gpu", 1))
	}
	e.waitBound(names...)
	e.create(resPod("slice-7", "nvidia.com/gpu", 1))
	e.waitUnschedulable("slice-7", "not enough free GPU capacity")
}

// Time-sliced GPUs: 2 L4s offered as 4 replicas each, renamed to
// nvidia.com/gpu.shared. Pods taking 2 shares fill a GPU in pairs.
func TestTimeSlicedGPUs(t *testing.T) {
	e := newEnv(t)
	e.nodeSpec(kubetest.Node{Name: "ts-0", Labels: map[string]string{
		kubetest.LabelProduct: "NVIDIA-L4", kubetest.LabelCount: "2", kubetest.LabelReplicas: "4"},
		Resources: map[string]string{"nvidia.com/gpu.shared": "8"}})
	e.start(e.config())
	// The node offers no whole GPUs: a pod asking for one waits.
	e.create(resPod("whole", "nvidia.com/gpu", 1))
	e.waitUnschedulable("whole", "")
	var names []string
	for i := range 4 {
		names = append(names, fmt.Sprintf("share-%d", i))
		e.create(resPod(names[i], "nvidia.com/gpu.shared", 2))
	}
	e.waitBound(names...)
	// Each binding names the GPU corral counted its share on, two pods a
	// GPU, so that a restarted scheduler counts them there again.
	on := map[string]int{}
	for _, name := range names {
		p, err := e.c.Client.CoreV1().Pods(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		on[p.Annotations[AnnotationShareGPU]]++
	}
	if on["0"] != 2 || on["1"] != 2 {
		t.Errorf("shares by GPU %v, want two on GPU 0 and two on GPU 1", on)
	}
	e.create(resPod("share-4", "nvidia.com/gpu.shared", 1))
	e.waitUnschedulable("share-4", "not enough free GPU capacity")
	e.create(resPod("mig", "nvidia.com/mig-1g.10gb", 1))
	e.waitUnschedulable("mig", "")
}

// A share's GPU is read from the DRA driver's allocation first, then from
// corral's own binding; anything else pins it nowhere (it is counted
// where the packing policy puts it).
func TestShareGPUAnnotations(t *testing.T) {
	for _, c := range []struct {
		dra, own string
		want     int
		ok       bool
	}{
		{"", "", 0, false},
		{"", "1", 1, true},
		{"3", "1", 3, true},
		{"", "-1", 0, false},
		{"", "one", 0, false},
		{"x", "2", 2, true},
	} {
		p := pod("p", 1)
		p.Annotations = map[string]string{}
		if c.dra != "" {
			p.Annotations[annotationDRAGPU] = c.dra
		}
		if c.own != "" {
			p.Annotations[AnnotationShareGPU] = c.own
		}
		if got, ok := shareGPU(p); got != c.want || ok != c.ok {
			t.Errorf("DRA %q, corral's %q: GPU %d, %v; want %d, %v", c.dra, c.own, got, ok, c.want, c.ok)
		}
	}
}

// A share moved off a failed node is bound naming the GPU of its new
// node it is counted on, and the copy started there carries nothing of
// the old binding: not its GPU, not when it was bound.
func TestMovedShareNamesItsNewGPU(t *testing.T) {
	sliced := func(name string) *corev1.Node {
		return kubeNode(name, map[string]string{LabelProduct: "NVIDIA-L4", LabelCount: "2", LabelReplicas: "4"},
			map[string]string{"nvidia.com/gpu.shared": "8"})
	}
	cfg := (&Config{}).withDefaults()
	f, _, _ := buildFleet([]*corev1.Node{sliced("a"), sliced("b")}, &cfg, nil)
	st, err := gang.New(f)
	if err != nil {
		t.Fatal(err)
	}
	// b's first GPU is shared out whole, so the share goes to its second.
	for i := range 4 {
		filler := &job.Job{Name: fmt.Sprintf("filler-%d", i), Groups: []job.Group{{Name: "pod", Count: 1, Task: job.Demand{Shares: 1}}}}
		if _, err := st.AdoptShareOn(filler, "b", 0); err != nil {
			t.Fatal(err)
		}
	}
	p := resPod("share", "nvidia.com/gpu.shared", 2)
	p.Namespace, p.UID, p.Spec.NodeName = "ns", "u", "a"
	p.Annotations = map[string]string{AnnotationShareGPU: "0", AnnotationBoundAt: "2026-01-01T00:00:00Z", "keep": "me"}
	m, err := moveOff(st, p, "a", nil, map[string]*corev1.Pod{}, movingGang{})
	if err != nil {
		t.Fatal(err)
	}
	if m.to != "b" || m.gpu != "1" {
		t.Errorf("moved to %s, GPU %q; want b, GPU 1", m.to, m.gpu)
	}
	c := podCopy(p, nil)
	if _, ok := c.Annotations[AnnotationShareGPU]; ok {
		t.Errorf("the copy keeps the old binding's GPU: %v", c.Annotations)
	}
	if _, ok := c.Annotations[AnnotationBoundAt]; ok || c.Annotations["keep"] != "me" {
		t.Errorf("the copy's annotations %v: want the pod's own, without the old binding's time", c.Annotations)
	}
}

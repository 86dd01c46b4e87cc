package kube

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/corral-sched/corral/internal/kube/kubetest"
	"github.com/corral-sched/corral/internal/kube/upstream"
)

func testView(t *testing.T) *upstream.View {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	fw, err := upstream.New(ctx, client, factory, DefaultSchedulerName)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	nodes, _ := benchCluster(2, 0, 0)
	return fw.NewView(nodes, nil)
}

// Pods that differ only in the CPU, memory and GPUs the core counts, and
// in their service account token's volume, are shown to Kubernetes'
// filters alike, so they share one run of them; pods that differ in
// anything the filters read do not.
func TestPodsShownAlikeShareOneFilterRun(t *testing.T) {
	view := testView(t)
	small, big := pod("small", 1), pod("big", 8)
	big.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("96")
	big.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("1Ti")
	pinned := pod("pinned", 1)
	pinned.Spec.NodeSelector = map[string]string{"pool": "a"}
	port := pod("port", 1)
	port.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
	for i, p := range []*corev1.Pod{small, big} { // as the API server's ServiceAccount admission gives them
		name := fmt.Sprintf("kube-api-access-%05d", i)
		p.Spec.Volumes = []corev1.Volume{{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}}
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: name, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
	}
	if podSignature(view, small) != podSignature(view, big) {
		t.Error("pods that differ only in CPU, memory and GPUs have different signatures: each runs the filters")
	}
	for _, p := range []*corev1.Pod{pinned, port} {
		if podSignature(view, p) == podSignature(view, small) {
			t.Errorf("pod %s shares a signature with a pod the filters see otherwise", p.Name)
		}
	}
	if small.Spec.Containers[0].Resources.Requests.Name(kubetest.ResourceGPU, resource.DecimalSI).Value() != 1 || len(small.Spec.Containers[0].VolumeMounts) != 1 {
		t.Error("the signature changed the pod it read")
	}
	var sigs signatures
	first := sigs.of(view, small)
	sigs.next()
	if got := sigs.of(view, small); got != first {
		t.Error("a kept pod's signature changed")
	}
	sigs.next()
	sigs.next()
	if len(sigs.last) != 0 {
		t.Errorf("%d signatures kept for pods no cycle asked about", len(sigs.last))
	}
}

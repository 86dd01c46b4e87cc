package kube

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// Where the cluster serves ProvisioningRequests, a pod group that no set
// of its nodes could hold even empty gets one (atomic scale-up, one pod
// set per pod shape, its PodTemplate made too); a group that only waits
// for room does not. Once nodes are added and the group starts, the
// request and its template are deleted.
func TestProvisioningRequestForGangNoNodeSetHolds(t *testing.T) {
	e := newEnv(t)
	e.otherCRDs()
	for i := range 2 {
		e.node(fmt.Sprintf("prov-%d", i), 8, nil)
	}
	e.start(e.config())
	ctx := context.Background()
	prs := e.c.Dynamic.Resource(ProvisioningRequestResource).Namespace(e.ns)

	// Fits the fleet, but not next to a running pod: no request.
	e.create(pod("sitter", 1))
	e.waitBound("sitter")
	e.podGroup("pair", 2, nil)
	e.create(inGroup(pod("pair-0", 8), "pair"), inGroup(pod("pair-1", 8), "pair"))
	e.waitUnschedulable("pair-0", "GPU")

	// Three pods of 8 GPUs on two 8-GPU nodes: never.
	e.podGroup("big", 3, nil)
	e.create(inGroup(pod("big-0", 8), "big"), inGroup(pod("big-1", 8), "big"), inGroup(pod("big-2", 8), "big"))
	var pr *unstructured.Unstructured
	e.eventually(func() error {
		var err error
		pr, err = prs.Get(ctx, "corral-big", metav1.GetOptions{})
		return err
	})
	class, _, _ := unstructured.NestedString(pr.Object, "spec", "provisioningClassName")
	sets, _, _ := unstructured.NestedSlice(pr.Object, "spec", "podSets")
	if class != ProvisioningClassAtomic || len(sets) != 1 {
		t.Fatalf("request %v, want class %s and one pod set", pr.Object["spec"], ProvisioningClassAtomic)
	}
	set := sets[0].(map[string]any)
	ref, _, _ := unstructured.NestedString(set, "podTemplateRef", "name")
	if count, _, _ := unstructured.NestedInt64(set, "count"); count != 3 {
		t.Errorf("pod set count %d, want 3", count)
	}
	tpl, err := e.c.Client.CoreV1().PodTemplates(e.ns).Get(ctx, ref, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("pod template %s: %v", ref, err)
	}
	if q := tpl.Template.Spec.Containers[0].Resources.Requests[kubetest.ResourceGPU]; q.Value() != 8 {
		t.Errorf("pod template asks for %v GPUs, want 8", q.Value())
	}
	// The group's pods say so.
	e.waitUnschedulable("big-0", "ProvisioningRequest "+e.ns+"/corral-big")
	if _, err := prs.Get(ctx, "corral-pair", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("request for pair, which fits the fleet: %v", err)
	}

	// The autoscaler adds nodes; the group starts and the request goes.
	for i := 2; i < 6; i++ { // room for both groups
		e.node(fmt.Sprintf("prov-%d", i), 8, nil)
	}
	e.waitBound("big-0", "big-1", "big-2")
	e.eventually(func() error {
		if _, err := prs.Get(ctx, "corral-big", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("request still there: %v", err)
		}
		if _, err := e.c.Client.CoreV1().PodTemplates(e.ns).Get(ctx, ref, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("pod template still there: %v", err)
		}
		return nil
	})
}

package kube

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// The permissions of deploy/rbac.yaml are enough to schedule: gangs and
// their status, conditions and events, preemption, the Lease, the
// accounting log, and dynamic resource allocation (claims allocated and
// reserved before binding); and the API server takes
// deploy/deployment.yaml.
func TestDeployRBACIsEnough(t *testing.T) {
	e := newEnv(t)
	e.otherCRDs() // so that it reads Volcano's, KAI's and JobSet's groups and makes ProvisioningRequests too
	crds, err := kubetest.CRDDir()
	if err != nil {
		t.Fatal(err)
	}
	sa := e.deployed() // deploy/rbac.yaml; the test fails on any request it forbids
	// The Deployment too: the API server checks its probes and ports (no
	// controller runs here, so it starts nothing).
	if err := e.c.Apply(context.Background(), filepath.Join(filepath.Dir(crds), "deployment.yaml")); err != nil {
		t.Fatal(err)
	}
	e.node("rbac-0", 8, nil)
	cfg := e.configNoGrace()
	cfg.AccountingConfigMaps = "corral-system/" + e.ns
	s := New(sa.Client, sa.Dynamic, cfg, testLogger())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		el := Election{Namespace: "corral-system", Name: e.ns, Identity: "only",
			LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 200 * time.Millisecond}
		if err := s.RunElected(ctx, el); err != nil {
			t.Errorf("scheduler: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })

	e.podGroup("duo", 2, nil)
	low0, low1 := inGroup(pod("duo-0", 4), "duo"), inGroup(pod("duo-1", 4), "duo")
	lowClass := e.priorityClass("low", 1)
	low0.Spec.PriorityClassName, low1.Spec.PriorityClassName = lowClass, lowClass
	e.create(low0, low1)
	e.waitBound("duo-0", "duo-1")
	e.waitGroupStatus("duo", PhaseScheduled, 2)
	e.create(pod("extra", 8))
	e.waitUnschedulable("extra", "not enough free GPU capacity")
	// A group no node holds: a ProvisioningRequest and its PodTemplate.
	e.podGroup("huge", 2, nil)
	e.create(inGroup(pod("huge-0", 16), "huge"), inGroup(pod("huge-1", 16), "huge"))
	e.eventually(func() error {
		_, err := e.c.Dynamic.Resource(ProvisioningRequestResource).Namespace(e.ns).Get(context.Background(), "corral-huge", metav1.GetOptions{})
		return err
	})
	high := pod("high", 8)
	high.Spec.PriorityClassName = e.priorityClass("high", 100)
	e.create(high)
	e.waitBound("high")
	for _, v := range []string{"duo-0", "duo-1"} {
		e.eventually(func() error { return e.hasEvent(v, EventPreempted, "to make room for "+e.ns+"/high") })
	}
	// The accounting log in corral-system: both starts, and both victims.
	e.waitRecords("corral-system/"+e.ns, "preempted", 2)
	// Dynamic resource allocation: NVIDIA's GPUs as its driver publishes
	// them, claimed through its chart's class; the claim allocated and
	// reserved (resourceclaims/binding), the pod bound.
	e.nodeSpec(kubetest.Node{Name: "rbac-dra"})
	e.vendorClasses("nvidia-deviceclasses.yaml", false)
	e.vendorSlice("nvidia-resourceslice-h100.yaml", "rbac-dra", 2)
	e.claim("two", "gpu.nvidia.com", 2, "")
	e.create(claimPod("dra", "two"))
	e.waitBound("dra")
	e.allocatedOn("two", "rbac-dra", "dra", 2)
	if st := s.Stats(); st.Evictions != 2 || st.Failures != 0 {
		t.Errorf("stats %+v, want the whole low-priority group (2 pods) evicted", st)
	}
}

package kube

import (
	"context"
	"fmt"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// lessThanDeployed returns clients of a user of this test granted the
// ClusterRole of deploy/rbac.yaml less the rules on the resource dropped
// (one of them), and a function that grants that user the whole role.
func (e *env) lessThanDeployed(dropped string) (*kubetest.Identity, func()) {
	e.t.Helper()
	ctx := context.Background()
	if err := e.c.ApplyDeployRBAC(ctx); err != nil {
		e.t.Fatal(err)
	}
	rbac := e.c.Client.RbacV1()
	full, err := rbac.ClusterRoles().Get(ctx, "corral-scheduler", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	user, less := "corral-less-"+e.ns, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "corral-less-" + e.ns}}
	for _, r := range full.Rules {
		r.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(res string) bool { return res == dropped })
		if len(r.Resources) > 0 {
			less.Rules = append(less.Rules, r)
		}
	}
	bindRole := func(name, role string) {
		b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
		if _, err := rbac.ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(func() { _ = rbac.ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{}) })
	}
	if _, err := rbac.ClusterRoles().Create(ctx, less, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(ctx, less.Name, metav1.DeleteOptions{}) })
	bindRole(less.Name, less.Name)
	id, err := e.c.As(user)
	if err != nil {
		e.t.Fatal(err)
	}
	return id, func() { bindRole(user+"-all", "corral-scheduler") }
}

// waitFailedBinding waits until a binding of s failed.
func (e *env) waitFailedBinding(s *Scheduler) {
	e.t.Helper()
	e.eventually(func() error {
		if s.Stats().Failures == 0 {
			return fmt.Errorf("no binding failed yet")
		}
		return nil
	})
}

// A pre-bind that fails (the claim's allocation refused: no
// resourceclaims/binding) gives back what the pod's placement reserved:
// the claim is not left "in the process of being allocated", so once the
// permission is granted the pod binds, its claim allocated on the node.
func TestDRAFailedPreBindUndoesItsReservation(t *testing.T) {
	e := newEnv(t)
	node := "unprebind-0"
	grant := e.failingClaimPod(node, "resourceclaims/binding")
	if got := e.nodesOf()["p"]; got != "" {
		t.Fatalf("p bound to %s though its claim could not be written", got)
	}
	grant()
	e.waitBound("p")
	e.allocatedOn("two", node, "p", 2)
}

// A bind that fails (no pods/binding) after the claim was allocated and
// reserved for the pod takes the reservation back: the claim is not left
// reserved for a pod that is not bound.
func TestDRAFailedBindUndoesItsReservation(t *testing.T) {
	e := newEnv(t)
	node := "unbind-0"
	grant := e.failingClaimPod(node, "pods/binding")
	e.eventually(func() error {
		c := e.getClaim("two")
		if c.Status.Allocation == nil {
			return fmt.Errorf("claim two not allocated")
		}
		if len(c.Status.ReservedFor) != 0 {
			return fmt.Errorf("claim two reserved for %+v, a pod whose binding failed", c.Status.ReservedFor)
		}
		return nil
	})
	grant()
	e.waitBound("p")
	e.allocatedOn("two", node, "p", 2)
}

// failingClaimPod runs corral with the deployed permissions less perm on
// a node of two of NVIDIA's H100s, and a pod p whose claim two asks for
// both, and waits until a binding of it failed; it returns what grants
// perm back.
func (e *env) failingClaimPod(node, perm string) (grant func()) {
	e.nodeSpec(kubetest.Node{Name: node})
	e.vendorClasses("nvidia-deviceclasses.yaml", false)
	e.vendorSlice("nvidia-resourceslice-h100.yaml", node, 2)
	id, grant := e.lessThanDeployed(perm)
	s := New(id.Client, id.Dynamic, e.config(), testLogger())
	e.startScheduler(s)
	e.claim("two", "gpu.nvidia.com", 2, "")
	e.create(claimPod("p", "two"))
	e.waitFailedBinding(s)
	return grant
}

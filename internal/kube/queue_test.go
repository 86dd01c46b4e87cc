package kube

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func queueObject(name string, gpus int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "corral.sh/v1alpha1", "kind": "Queue",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"tenant": "research", "quota": map[string]any{"gpus": gpus}},
	}}
}

// createQueue makes a cluster-wide Queue for this test.
func (e *env) createQueue(name string, gpus int64) string {
	e.t.Helper()
	name = e.ns + "-" + name
	ctx := context.Background()
	if _, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, queueObject(name, gpus), metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("queue %s: %v", name, err)
	}
	e.t.Cleanup(func() { _ = e.c.Dynamic.Resource(QueueResource).Delete(ctx, name, metav1.DeleteOptions{}) })
	return name
}

func TestQueueRejectsNegativeQuota(t *testing.T) {
	e := newEnv(t)
	_, err := e.c.Dynamic.Resource(QueueResource).Create(context.Background(), queueObject(e.ns+"-neg", -1), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "spec.quota.gpus") {
		t.Fatalf("negative quota: err %v, want the API server to reject spec.quota.gpus", err)
	}
	e.createQueue("zero", 0)
}

func TestQueueQuotaAtAdmission(t *testing.T) {
	e := newEnv(t)
	e.node("quota-0", 8, nil)
	e.node("quota-1", 8, nil)
	q := e.createQueue("team", 6)
	e.start(e.config())
	a, b := pod("a", 4), pod("b", 4)
	a.Labels[LabelQueue], b.Labels[LabelQueue] = q, q
	e.create(a)
	e.waitBound("a")
	e.create(b)
	e.waitUnschedulable("b", "over quota")
	c := pod("c", 2)
	c.Labels[LabelQueue] = q
	e.create(c)
	e.waitBound("c")
}

// The API server checks a Queue's cohort fields against the CRD's schema,
// and the scheduler reads them.
func TestQueueCohortFields(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	bad := queueObject(e.ns+"-badborrow", 4)
	bad.Object["spec"].(map[string]any)["cohort"] = "lab"
	bad.Object["spec"].(map[string]any)["borrowingLimit"] = map[string]any{"gpus": int64(-2)}
	if _, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, bad, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "spec.borrowingLimit.gpus") {
		t.Fatalf("negative borrowing limit: %v, want the API server to reject it", err)
	}
	good := queueObject(e.ns+"-lab", 4)
	good.Object["spec"].(map[string]any)["cohort"] = "lab"
	good.Object["spec"].(map[string]any)["borrowingLimit"] = map[string]any{"gpus": int64(2)}
	created, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, good, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.c.Dynamic.Resource(QueueResource).Delete(ctx, created.GetName(), metav1.DeleteOptions{}) })
	q, err := parseQueue(created)
	if err != nil || q.Cohort != "lab" || q.Borrow != 2 || q.GPUs != 4 {
		t.Errorf("parsed %+v, %v", q, err)
	}
}

package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/sched"
)

// createBudgetQueue makes a Queue of this test without a quota and with
// spec.budget.
func (e *env) createBudgetQueue(name, budget string) string {
	e.t.Helper()
	name = e.ns + "-" + name
	obj := queueObject(name, 0)
	spec := obj.Object["spec"].(map[string]any)
	delete(spec, "quota")
	spec["budget"] = budget
	ctx := context.Background()
	if _, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("queue %s: %v", name, err)
	}
	e.t.Cleanup(func() { _ = e.c.Dynamic.Resource(QueueResource).Delete(ctx, name, metav1.DeleteOptions{}) })
	return name
}

// TestQueueBudgetAtAdmission: a queue may use 6 GPU-hours per 720h. A
// 4-GPU pod with a 1h deadline binds; a second one would bring the queue
// to 8 and waits for the budget, with the numbers, while the same pod of
// another queue binds beside it; the API server refuses a malformed
// budget.
func TestQueueBudgetAtAdmission(t *testing.T) {
	e := newEnv(t)
	e.node("budget-0", 8, nil)
	e.node("budget-1", 8, nil)
	capped, other := e.createBudgetQueue("capped", "6/720h"), e.createBudgetQueue("other", "100/720h")
	e.start(e.config())
	hour := int64(3600)
	withQueue := func(name, q string) {
		p := pod(name, 4)
		p.Labels[LabelQueue] = q
		p.Spec.ActiveDeadlineSeconds = &hour
		e.create(p)
	}
	withQueue("first", capped)
	e.waitBound("first")
	withQueue("second", capped)
	msg := e.waitReason("second", ReasonWaitingForBudget, "would need 4 GPUs x its time limit = 4.0 GPU-hours")
	if !strings.Contains(msg, "4.0 more committed to running work") {
		t.Errorf("message %q does not count the bound pod's commitment", msg)
	}
	withQueue("third", other)
	e.waitBound("third")

	bad := queueObject(e.ns+"-bad", 1)
	bad.Object["spec"].(map[string]any)["budget"] = "6/week"
	if _, err := e.c.Dynamic.Resource(QueueResource).Create(context.Background(), bad, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "spec.budget") {
		t.Errorf("a budget per week: %v, want the API server to refuse spec.budget", err)
	}
}

// TestBudgetLogKeepsThePeriod: what ended pods used counts in the
// budget's period only, clipped at its start, and earlier use is dropped.
func TestBudgetLogKeepsThePeriod(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var l budgetLog
	l.add("q", 2, t0.Add(-3*time.Hour), t0.Add(-time.Hour)) // the month before
	l.add("q", 2, t0.Add(-time.Hour), t0.Add(2*time.Hour))  // 2h of it in March
	l.add("q", 0.5, t0.Add(time.Hour), t0.Add(5*time.Hour))
	l.add("other", 8, t0, t0.Add(time.Hour))
	got := l.spent(map[string]sched.Budget{"q": {GPUHours: 10}}, t0.Add(6*time.Hour))
	if len(got) != 1 || got["q"] != 6 {
		t.Errorf("spent %v, want q 6 (2 GPUs x 2h and 0.5 x 4h)", got)
	}
	if n := len(l.ended["q"]); n != 2 {
		t.Errorf("%d uses kept, want the 2 that reach into March", n)
	}
}

func TestParseQueueBudget(t *testing.T) {
	obj := queueObject("q", 4)
	obj.Object["spec"].(map[string]any)["budget"] = "1000/month"
	q, err := parseQueue(obj)
	if err != nil || q.Budget == nil || *q.Budget != (sched.Budget{GPUHours: 1000}) {
		t.Fatalf("parsed %+v, %v", q, err)
	}
	obj.Object["spec"].(map[string]any)["budget"] = "lots"
	if _, err := parseQueue(obj); err == nil || !strings.Contains(err.Error(), "spec.budget") {
		t.Errorf("a malformed budget: %v", err)
	}
}

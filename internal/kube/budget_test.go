package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/kube/kubetest"
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
// budget. The scheduler's clock is 100h into a period: near a reset, the
// bound pod's commitment is counted only up to the reset, and the second
// pod would fit (a CI run 13 minutes before one saw it bind).
func TestQueueBudgetAtAdmission(t *testing.T) {
	e := newEnv(t)
	e.node("budget-0", 8, nil)
	e.node("budget-1", 8, nil)
	capped, other := e.createBudgetQueue("capped", "6/720h"), e.createBudgetQueue("other", "100/720h")
	cfg := e.config()
	cfg.Now = intoPeriod(720*time.Hour, 100*time.Hour)
	e.start(cfg)
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

// TestQueueDollarBudget: a queue may spend $30 per 720h on nodes whose
// GPUs cost $3 an hour (corral.sh/gpu-price, as an admin annotates them).
// A 4-GPU pod with a 1h deadline ($12) binds; a second ($12 more, $18
// left) binds; a third would bring the queue to $36 and waits, in dollars.
// The API server takes the dollar budget under the shipped CRD's pattern.
func TestQueueDollarBudget(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"dollar-0", "dollar-1"} {
		e.nodeSpec(kubetest.Node{Name: n, GPUs: 8, Product: "NVIDIA-H100-80GB-HBM3", GPUMemMiB: 81559,
			Annotations: map[string]string{AnnotationGPUPrice: "3"}})
	}
	capped := e.createBudgetQueue("dollars", "$30/720h")
	cfg := e.config()
	cfg.Now = intoPeriod(720*time.Hour, 100*time.Hour)
	e.start(cfg)
	hour := int64(3600)
	withQueue := func(name string) {
		p := pod(name, 4)
		p.Labels[LabelQueue] = capped
		p.Spec.ActiveDeadlineSeconds = &hour
		e.create(p)
	}
	withQueue("first")
	e.waitBound("first")
	withQueue("second")
	e.waitBound("second")
	withQueue("third")
	msg := e.waitReason("third", ReasonWaitingForBudget, "would need 4 GPUs x its time limit at up to $3.00 per GPU-hour = $12.00")
	if !strings.Contains(msg, "of $30.00 used this period") {
		t.Errorf("message %q is not in dollars", msg)
	}
}

// intoPeriod is a clock that runs at the real rate, set to into past the
// start of the current period of every (anchored at the Unix epoch), so
// that a test's budget arithmetic does not depend on the day it runs.
func intoPeriod(every, into time.Duration) func() time.Time {
	start, _ := sched.Budget{Every: every}.Period(time.Now())
	shift := start.Add(into).Sub(time.Now())
	return func() time.Time { return time.Now().Add(shift) }
}

// TestBudgetLogKeepsThePeriod: what ended pods used counts in the
// budget's period only, clipped at its start, and earlier use is dropped.
func TestBudgetLogKeepsThePeriod(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var l budgetLog
	l.add("q", "feb", "h100", 2, t0.Add(-3*time.Hour), t0.Add(-time.Hour)) // the month before
	l.add("q", "both", "h100", 2, t0.Add(-time.Hour), t0.Add(2*time.Hour)) // 2h of it in March
	l.add("q", "half", "l4", 0.5, t0.Add(time.Hour), t0.Add(5*time.Hour))
	l.add("q", "half", "l4", 0.5, t0.Add(time.Hour), t0.Add(5*time.Hour)) // told twice: by its handler and by the log
	l.add("other", "o", "h100", 8, t0, t0.Add(time.Hour))
	price := func(node string) float64 { return map[string]float64{"h100": 3, "l4": 0.5}[node] }
	got := l.spent(map[string]sched.Budget{"q": {Amount: 10}}, t0.Add(6*time.Hour), price)
	if len(got) != 1 || got["q"] != 6 {
		t.Errorf("spent %v, want q 6 (2 GPUs x 2h and 0.5 x 4h, each pod once)", got)
	}
	if got := l.spent(map[string]sched.Budget{"q": {Amount: 100, USD: true}}, t0.Add(6*time.Hour), price); got["q"] != 13 {
		t.Errorf("spent %v, want q $13 (4 GPU-hours at $3 and 2 at $0.50)", got)
	}
	if n := len(l.ended["q"]); n != 2 {
		t.Errorf("%d uses kept, want the 2 that reach into March", n)
	}
	if l.known["feb"] || !l.known["half"] {
		t.Errorf("pods known %v: want February's dropped with its use, March's kept", l.known)
	}
}

// TestBudgetRecordOfTheLog: an end record of the accounting log counts
// from its start (its time less its run time), for a queue with a budget
// only.
func TestBudgetRecordOfTheLog(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	b := sched.Budget{Amount: 100}
	queues := map[string]*queueSpec{"q": {Name: "q", Budget: &b}, "free": {Name: "free"}}
	var l budgetLog
	l.addRecord("u1", Record{Event: "end", Time: t0.Add(3 * time.Hour), Queue: "q", GPUs: 4, RunSeconds: 7200}, queues)
	l.addRecord("u2", Record{Event: "end", Time: t0.Add(3 * time.Hour), Queue: "free", GPUs: 4, RunSeconds: 7200}, queues)
	l.addRecord("u3", Record{Event: "end", Time: t0.Add(3 * time.Hour), Queue: "gone", GPUs: 4, RunSeconds: 7200}, queues)
	got := l.spent(map[string]sched.Budget{"q": b}, t0.Add(4*time.Hour), func(string) float64 { return 0 })
	if got["q"] != 8 || len(l.ended) != 1 {
		t.Errorf("spent %v from %d queues' records, want q 8 (4 GPUs x 2h) and no other queue kept", got, len(l.ended))
	}
}

// TestBudgetKeepsEndedUseAcrossLeaders: a queue may use 10 GPU-hours per
// 720h. Two 2-GPU pods run an hour: one succeeds while the first leader
// leads, the other is deleted while no replica leads. The new leader
// reads the first's end from the accounting log and writes the second's,
// so it counts 4 GPU-hours used: a 4-GPU pod with a 2h limit (8 more)
// waits, one with a 1h limit (4 more) binds. Before, a new leader counted
// only bound pods, and both bound.
func TestBudgetKeepsEndedUseAcrossLeaders(t *testing.T) {
	e := newEnv(t)
	e.node("budgetlead-0", 8, nil)
	capped := e.createBudgetQueue("capped", "10/720h")
	start, _ := sched.Budget{Every: 720 * time.Hour}.Period(time.Now())
	clock := &fakeClock{now: start.Add(100 * time.Hour)}
	cfg := e.config()
	cfg.Now, cfg.AccountingConfigMaps = clock.Now, leaseNamespace+"/"+e.ns
	withQueue := func(name string, gpus int, limit int64) {
		p := pod(name, gpus)
		p.Labels[LabelQueue] = capped
		p.Spec.ActiveDeadlineSeconds = &limit
		e.create(p)
	}
	stopA := e.elected("a", cfg)
	withQueue("done", 2, 3600)
	withQueue("gone", 2, 3600)
	e.waitBound("done", "gone")
	e.waitRecords(cfg.AccountingConfigMaps, "start", 2)
	clock.Add(time.Hour)
	e.setPhase("done", corev1.PodSucceeded)
	e.waitRecords(cfg.AccountingConfigMaps, "end", 1)
	stopA()
	zero := int64(0)
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(context.Background(), "gone", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	e.elected("b", cfg)
	e.waitHolder("b")
	e.waitRecords(cfg.AccountingConfigMaps, "end", 2)
	withQueue("long", 4, 2*3600)
	msg := e.waitReason("long", ReasonWaitingForBudget, "would need 4 GPUs x its time limit = 8.0 GPU-hours")
	if !strings.Contains(msg, "4.0 of 10.0 GPU-hours used this period") {
		t.Errorf("message %q does not count the two ended pods' 4 GPU-hours", msg)
	}
	withQueue("short", 4, 3600)
	e.waitBound("short")
}

func TestParseQueueBudget(t *testing.T) {
	obj := queueObject("q", 4)
	obj.Object["spec"].(map[string]any)["budget"] = "1000/month"
	q, err := parseQueue(obj)
	if err != nil || q.Budget == nil || *q.Budget != (sched.Budget{Amount: 1000}) {
		t.Fatalf("parsed %+v, %v", q, err)
	}
	obj.Object["spec"].(map[string]any)["budget"] = "lots"
	if _, err := parseQueue(obj); err == nil || !strings.Contains(err.Error(), "spec.budget") {
		t.Errorf("a malformed budget: %v", err)
	}
}

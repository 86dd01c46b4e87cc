package server

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

// TestBudgetHoldsTheTenantAtItsBudget: tenant a may use 12 GPU-hours per
// 720h and its ended runs used 10 of them this period (accounting
// records in the store, as a restarted server finds them). A 1-GPU job
// with a 1h limit starts; one with a 2h limit would overrun and waits,
// saying so with the numbers and the forecast, in the queue and in
// explain; tenant b, without a budget, runs the same job at once.
func TestBudgetHoldsTheTenantAtItsBudget(t *testing.T) {
	budget := sched.Budget{Amount: 12, Every: 720 * time.Hour}
	h, a, at, start := budgetedServer(t, budget, 0)
	ctx := context.Background()
	b := h.tenant("b", 0)
	fits := h.submit(a, limitedJob(time.Hour))
	h.waitState(a, fits.ID, store.Running, 20*time.Second)
	over := h.submit(a, limitedJob(2*time.Hour))
	other := h.submit(b, limitedJob(2*time.Hour))
	h.waitState(b, other.ID, store.Running, 20*time.Second)
	held := h.wait(a, over.ID, 10*time.Second, "a budget reason", func(j api.Job) bool { return strings.Contains(j.Reason, ReasonBudget) })
	if held.State != string(store.Pending) {
		t.Fatalf("the job over budget is %s", held.State)
	}
	for _, want := range []string{"10.0 of 12.0 GPU-hours used this period", "1.0 more committed to running work",
		"1 GPU x its time limit = 2.0 GPU-hours, 1.0 are left", "the period resets at " + start.Add(720*time.Hour).UTC().Format(time.RFC3339)} {
		if !strings.Contains(held.Reason, want) {
			t.Errorf("reason %q lacks %q", held.Reason, want)
		}
	}
	// 10 GPU-hours in 100h, and the running job's use since: the 2 left
	// last 20h, less the seconds the running job has run.
	_, forecast, _ := strings.Cut(held.Reason, "runs out at ")
	if out, err := time.Parse(time.RFC3339, forecast); err != nil || out.Sub(at.Add(20*time.Hour)).Abs() > 5*time.Minute {
		t.Errorf("forecast %q (%v), want about %v", forecast, err, at.Add(20*time.Hour).UTC())
	}
	e, err := a.Explain(ctx, over.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.Summary, "12.0 GPU-hours") || !strings.Contains(e.Summary, "runs out at "+forecast[:13]) {
		t.Errorf("explain says %q", e.Summary)
	}
}

// budgetedServer starts a server of 4 GPUs at gpuPrice per GPU-hour whose
// clock is 100h into one of budget's periods (start), with tenant a
// under budget and a's client: a's ended runs used 10 GPU-hours this
// period (an accounting record in the store, as a restarted server finds
// it), ending 5h before at, the server's time at the start.
func budgetedServer(t *testing.T, budget sched.Budget, gpuPrice float64) (h *harness, a *client.Client, at, start time.Time) {
	t.Helper()
	start, _ = budget.Period(time.Now())
	shift := start.Add(100 * time.Hour).Sub(time.Now())
	now := func() time.Time { return time.Now().Add(shift) }
	dir, st := tempStore(t)
	at = now()
	if err := st.Update(func(tx *store.Tx) error {
		return tx.AddRecord(store.Record{JobID: 1000, Tenant: "a", GPUs: 2, Start: at.Add(-10 * time.Hour), End: at.Add(-5 * time.Hour), GPUSeconds: 36000})
	}); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Store: st, GPUs: fakeGPUs(4), GPUPrice: gpuPrice, StateDir: filepath.Join(dir, "tasks"), Interval: 100 * time.Millisecond, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	h = startHarness(t, srv, st)
	ctx := context.Background()
	if _, err := h.admin.CreateTenant(ctx, api.TenantRequest{Name: "a", Budget: budget.String()}); err != nil {
		t.Fatal(err)
	}
	tok, err := h.admin.IssueToken(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	return h, &client.Client{Server: h.url, Token: tok.Token}, at, start
}

// limitedJob is a 1-GPU job with a time limit.
func limitedJob(limit time.Duration) api.JobRequest {
	return api.JobRequest{GPUs: 1, Time: limit.String(), Command: []string{"sleep", "30"}}
}

func TestBudgetRefusedWhenMalformed(t *testing.T) {
	h := newHarness(t, 1)
	ctx := context.Background()
	if _, err := h.admin.CreateTenant(ctx, api.TenantRequest{Name: "a", Budget: "12/week"}); err == nil || !strings.Contains(err.Error(), "period") {
		t.Errorf("a budget per week: %v, want a refusal naming the period", err)
	}
	h.tenant("b", 0)
	bad := "lots/720h"
	if _, err := h.admin.UpdateTenant(ctx, "b", api.TenantUpdate{Budget: &bad}); err == nil || !strings.Contains(err.Error(), "GPU-hours") {
		t.Errorf("budget %s: %v, want a refusal", bad, err)
	}
}

// A tenant cannot lift its own budget: the tenants' API is the admin's,
// and the budget stays as the admin set it.
func TestTenantCannotLiftItsOwnBudget(t *testing.T) {
	h := newHarness(t, 1)
	ctx := context.Background()
	if _, err := h.admin.CreateTenant(ctx, api.TenantRequest{Name: "a", Budget: "12/720h"}); err != nil {
		t.Fatal(err)
	}
	tok, err := h.admin.IssueToken(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	a := &client.Client{Server: h.url, Token: tok.Token}
	lifted := "1000000/720h"
	if _, err := a.UpdateTenant(ctx, "a", api.TenantUpdate{Budget: &lifted}); !isStatus(err, http.StatusForbidden) {
		t.Errorf("the tenant lifting its own budget: %v, want 403", err)
	}
	if got, err := h.st.Tenant("a"); err != nil || got.Budget != "12/720h" {
		t.Errorf("budget after the attempt: %q (%v), want 12/720h", got.Budget, err)
	}
}

// TestDollarBudgetOnTheServer: with --gpu-price 3, tenant a may spend $36
// per 720h and its ended runs cost $30 (10 GPU-hours). A 1-GPU job with
// a 1h limit ($3) starts; one with a 2h limit ($6) waits, in dollars. A
// server whose GPUs have no price refuses a dollar budget.
func TestDollarBudgetOnTheServer(t *testing.T) {
	h, a, _, _ := budgetedServer(t, sched.Budget{Amount: 36, USD: true, Every: 720 * time.Hour}, 3)
	ctx := context.Background()
	fits := h.submit(a, limitedJob(time.Hour))
	h.waitState(a, fits.ID, store.Running, 20*time.Second)
	over := h.submit(a, limitedJob(2*time.Hour))
	held := h.wait(a, over.ID, 10*time.Second, "a budget reason", func(j api.Job) bool { return strings.Contains(j.Reason, ReasonBudget) })
	for _, want := range []string{"of $36.00 used this period", "1 GPU x its time limit at up to $3.00 per GPU-hour = $6.00"} {
		if !strings.Contains(held.Reason, want) {
			t.Errorf("reason %q lacks %q", held.Reason, want)
		}
	}

	unpriced := newHarness(t, 1)
	if _, err := unpriced.admin.CreateTenant(ctx, api.TenantRequest{Name: "a", Budget: "$100/month"}); err == nil || !strings.Contains(err.Error(), "--gpu-price") {
		t.Errorf("a dollar budget on a server without a GPU price: %v, want a refusal naming --gpu-price", err)
	}
}

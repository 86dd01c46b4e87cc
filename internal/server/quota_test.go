package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

// Quotas count CPU and memory as well as GPUs: a tenant capped at one CPU
// core runs at most two half-core jobs at once on a machine with room for
// four, CPU-only or not, and a job larger than its cap is refused at
// submit. (A job that asks for no memory is charged the default, here the
// whole 1 GiB quota: these ask for 256 MiB each, so that the CPU cap is
// the one reached.)
func TestQuotaCountsCPUAndMemory(t *testing.T) {
	h := newHarness(t, 8)
	ctx := context.Background()
	cpus, mem := 1.0, int64(1024)
	if _, err := h.admin.CreateTenant(ctx, api.TenantRequest{Name: "cpu", QuotaCPUs: cpus, QuotaMemoryMiB: mem}); err != nil {
		t.Fatal(err)
	}
	tok, err := h.admin.IssueToken(ctx, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	c := &client.Client{Server: h.url, Token: tok.Token}
	if _, err := c.Submit(ctx, api.JobRequest{CPU: 1.5, Command: []string{"true"}}); err == nil || !strings.Contains(err.Error(), "can never hold more than 1 CPUs") {
		t.Fatalf("1.5 CPUs under a 1-CPU cap: %v, want a refusal", err)
	}
	if _, err := c.Submit(ctx, api.JobRequest{CPU: 0.5, MemoryMiB: 2048, Command: []string{"true"}}); err == nil || !strings.Contains(err.Error(), "1024 MiB") {
		t.Fatalf("2 GiB under a 1 GiB cap: %v, want a refusal", err)
	}
	var ids []string
	for range 5 {
		ids = append(ids, h.submit(c, api.JobRequest{CPU: 0.5, MemoryMiB: 256, Command: []string{"sleep", "30"}}).ID)
	}
	h.waitState(c, ids[0], store.Running, 20*time.Second)
	time.Sleep(300 * time.Millisecond) // several cycles
	running, err := c.Jobs(ctx, url.Values{"state": {"running"}})
	if err != nil {
		t.Fatal(err)
	}
	pending, err := c.Jobs(ctx, url.Values{"state": {"pending"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(running) != 2 || len(pending) != 3 || !strings.Contains(pending[0].Reason, ReasonQuota) {
		t.Fatalf("%d running, %d pending (%q); want 2 running and 3 waiting for quota", len(running), len(pending), reason(pending))
	}
}

func reason(jobs []api.Job) string {
	if len(jobs) == 0 {
		return ""
	}
	return jobs[0].Reason
}

// A submission never waits for a scheduling cycle: while a cycle holds
// the scheduler's lock (as one over thousands of waiting jobs does for
// hundreds of milliseconds), a job within quota is acknowledged and one
// no quota could ever admit is refused with the core's reason.
func TestSubmitDoesNotWaitForTheCycle(t *testing.T) {
	h := newHarness(t, 2)
	capped := h.tenant("capped", 1)
	h.srv.mu.Lock() // a long cycle
	type answer struct {
		ok, refused error
	}
	done := make(chan answer, 1)
	go func() {
		ctx := context.Background()
		_, ok := capped.Submit(ctx, api.JobRequest{GPUs: 1, Command: []string{"true"}})
		_, refused := capped.Submit(ctx, api.JobRequest{GPUs: 2, Command: []string{"true"}})
		done <- answer{ok, refused}
	}()
	var a answer
	select {
	case a = <-done:
	case <-time.After(20 * time.Second):
		h.srv.mu.Unlock()
		t.Fatal("submissions waited for the cycle's lock")
	}
	h.srv.mu.Unlock()
	if a.ok != nil {
		t.Errorf("a 1-GPU job within a 1-GPU quota: %v", a.ok)
	}
	if !isStatus(a.refused, http.StatusUnprocessableEntity) || !strings.Contains(a.refused.Error(), "can never hold more than 1 GPU") {
		t.Errorf("a 2-GPU job on a 1-GPU quota without a cohort: %v, want 422 naming the quota", a.refused)
	}
}

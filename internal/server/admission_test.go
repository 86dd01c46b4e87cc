package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

// cohortTenant is a tenant with a GPU quota in a cohort.
func (h *harness) cohortTenant(name string, quota float64, cohort string) *client.Client {
	h.t.Helper()
	ctx := context.Background()
	if _, err := h.admin.CreateTenant(ctx, api.TenantRequest{Name: name, QuotaGPUs: quota, Cohort: cohort}); err != nil {
		h.t.Fatal(err)
	}
	tok, err := h.admin.IssueToken(ctx, name)
	if err != nil {
		h.t.Fatal(err)
	}
	return &client.Client{Server: h.url, Token: tok.Token}
}

// A job is refused at submit only when no quota its tenant could ever
// hold or borrow admits it, by the core's check, as the simulator refuses
// it: alice (2 GPUs, cohort lab, where bob lends 5) may run 4 GPUs by
// borrowing, and is told why 8 never run on the 8-GPU box.
func TestServerAdmitsWhatTheCohortLends(t *testing.T) {
	h := newHarness(t, 8)
	alice := h.cohortTenant("alice", 2, "lab")
	h.cohortTenant("bob", 5, "lab")
	j := h.submit(alice, api.JobRequest{GPUs: 4, Command: []string{"sleep", "30"}})
	h.waitState(alice, j.ID, store.Running, 20*time.Second)
	_, err := alice.Submit(context.Background(), api.JobRequest{GPUs: 8, Command: []string{"true"}})
	want := "tenant alice can never hold more than 7 GPUs: its own 2 GPUs and 5 GPUs its cohort lab could lend; the job needs 8 GPUs"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("8 GPUs: %v, want refused with %q", err, want)
	}
}

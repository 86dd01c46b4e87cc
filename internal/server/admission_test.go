package server

import (
	"context"
	"regexp"
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

// aheadOf reads how many waiting jobs explain says come before a job.
var aheadOf = regexp.MustCompile(`(\d+) waiting jobs`)

// Explain tells the cycle's own order: a tenant that has used the box
// comes after one that has not (fair share), whatever their submission
// order, and the jobs start in the order explain gave.
func TestExplainOrderIsTheStartOrder(t *testing.T) {
	h := newHarness(t, 8)
	heavy, light := h.tenant("heavy", 0), h.tenant("light", 0)
	ctx := context.Background()
	hog := h.submit(heavy, api.JobRequest{GPUs: 8, Command: []string{"sleep", "60"}})
	h.waitState(heavy, hog.ID, store.Running, 20*time.Second)
	time.Sleep(time.Second) // heavy's fair-share use grows
	first := h.submit(heavy, api.JobRequest{GPUs: 8, Time: "1h", Command: []string{"sleep", "60"}})
	second := h.submit(light, api.JobRequest{GPUs: 8, Time: "1h", Command: []string{"sleep", "60"}})
	h.waitCycle()
	for _, tc := range []struct {
		c     *client.Client
		id    string
		ahead bool
	}{{light, second.ID, false}, {heavy, first.ID, true}} {
		ex, err := tc.c.Explain(ctx, tc.id)
		if err != nil {
			t.Fatal(err)
		}
		said := aheadOf.FindStringSubmatch(strings.Join(ex.Reasons, "\n"))
		if (said != nil && said[1] == "1") != tc.ahead || (said != nil && said[1] != "1") {
			t.Errorf("%s: explain %+v; want one job before it: %v", tc.id, ex, tc.ahead)
		}
	}
	if _, err := heavy.Cancel(ctx, hog.ID); err != nil {
		t.Fatal(err)
	}
	h.waitState(light, second.ID, store.Running, 20*time.Second)
	if j, err := heavy.Job(ctx, first.ID); err != nil || j.State != string(store.Pending) {
		t.Fatalf("heavy's job %+v (%v), want it still pending behind light's", j, err)
	}
}

// A job held because its tenant lent its own quota is told, in the
// tenant's terms, who uses it and when their jobs are stopped to give it
// back (within the reclaim patience, the server's default hour); one
// asking beyond its tenant's own quota is told nothing is taken back
// for it. Before, the reason was the ledger's ("room for 0 (4 of its
// nominal lent out)").
func TestQuotaReasonNamesBorrowersAndWhen(t *testing.T) {
	h := newHarness(t, 8)
	alice, bob := h.cohortTenant("alice", 4, "lab"), h.cohortTenant("bob", 4, "lab")
	for range 8 { // bob uses its 4 and alice's 4
		j := h.submit(bob, api.JobRequest{GPUs: 1, Command: []string{"sleep", "600"}})
		h.waitState(bob, j.ID, store.Running, 20*time.Second)
	}
	own := h.submit(alice, api.JobRequest{GPUs: 2, Command: []string{"true"}})
	j := h.wait(alice, own.ID, 10*time.Second, "a quota reason", func(j api.Job) bool { return strings.Contains(j.Reason, ReasonQuota) })
	want := regexp.MustCompile(`^tenant GPU quota reached: tenant alice has room for 0 more GPUs under its quota; this job needs 2; ` +
		`4 GPUs of its own quota are lent to cohort lab, used by tenant bob; their jobs are stopped to give them back at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d, ` +
		`once this job has waited the reclaim patience`)
	if !want.MatchString(j.Reason) {
		t.Errorf("reason %q, want it to match %s", j.Reason, want)
	}
	beyond := h.submit(alice, api.JobRequest{GPUs: 6, Command: []string{"true"}})
	j = h.wait(alice, beyond.ID, 10*time.Second, "a quota reason", func(j api.Job) bool { return strings.Contains(j.Reason, ReasonQuota) })
	if !strings.Contains(j.Reason, "this job asks beyond the tenant's own quota, so none is taken back for it") {
		t.Errorf("a job beyond the tenant's own quota: reason %q", j.Reason)
	}
}

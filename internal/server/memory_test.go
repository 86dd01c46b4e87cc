package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

// What the core remembers of a job between cycles lives in the store with
// the job, so a restarted server goes on from it: a job stopped to give
// lent quota back keeps its preemption count and may not borrow again
// for the reborrow back-off, after a restart as before it.
func TestServerRestartKeepsTheReborrowBackOff(t *testing.T) {
	dir, st := tempStore(t)
	open := func() *harness {
		srv, err := New(Config{Store: st, GPUs: fakeGPUs(8), StateDir: filepath.Join(dir, "tasks"),
			Interval: 100 * time.Millisecond, ReclaimPatience: -1})
		if err != nil {
			t.Fatal(err)
		}
		return startHarness(t, srv, st)
	}
	h := open()
	owner, borrower := h.cohortTenant("owner", 4, "lab"), h.cohortTenant("borrower", 4, "lab")
	big := h.submit(borrower, api.JobRequest{GPUs: 6, Grace: "1s", Command: []string{"sleep", "600"}})
	h.waitState(borrower, big.ID, store.Running, 20*time.Second)
	claim := h.submit(owner, api.JobRequest{GPUs: 4, Command: []string{"sleep", "600"}})
	h.waitState(owner, claim.ID, store.Running, 20*time.Second)
	// backedOff waits until explain says big waits out its back-off.
	backedOff := func(c *client.Client) {
		t.Helper()
		var (
			e   api.Explain
			err error
		)
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if e, err = c.Explain(context.Background(), big.ID); err == nil && strings.Contains(e.Summary, "may not borrow until") {
				return
			}
		}
		t.Fatalf("big: explain %+v (%v), want it waiting out its back-off", e, err)
	}
	backedOff(borrower)
	if _, err := owner.Cancel(context.Background(), claim.ID); err != nil {
		t.Fatal(err)
	}
	h.waitState(owner, claim.ID, store.Cancelled, 20*time.Second)
	backedOff(borrower) // the owner's 4 GPUs are free to lend, but not to big

	h.stop(false) // the server goes away; its store stays
	h = open()
	borrower = &client.Client{Server: h.url, Token: borrower.Token}
	backedOff(borrower)
	time.Sleep(5 * h.srv.cfg.Interval) // cycles of the new server
	if j := h.waitState(borrower, big.ID, store.Preempted, time.Second); j.Attempts != 1 {
		t.Errorf("big: %+v, want it waiting after one run", j)
	}
	rec, err := st.Get(mustID(t, big.ID))
	if err != nil || rec.Preemptions != 1 || rec.NoBorrowUntil.Before(time.Now().Add(5*time.Minute)) {
		t.Fatalf("stored big: %d preemptions, no borrowing until %v (%v); want 1 and about 10 minutes on", rec.Preemptions, rec.NoBorrowUntil, err)
	}
}

// TestServerRestartKeepsTheClaimOnFreedRoom: a job that running work is
// being stopped for keeps its claim on the room across a restart of the
// server. Of its two victims one has ended, the other is still stopping
// when the server restarts; the room the first freed stays the
// claimant's, so that a job of higher priority submitted after the
// restart does not take it (as it does not when the server stays up),
// and the claimant starts once the second victim ends. The later job is
// another tenant's, of the claimant's priority, with no use yet: but
// for the claim, fair share would order it first.
func TestServerRestartKeepsTheClaimOnFreedRoom(t *testing.T) {
	dir, st := tempStore(t)
	open := func() *harness {
		srv, err := New(Config{Store: st, GPUs: fakeGPUs(8), StateDir: filepath.Join(dir, "tasks"), Interval: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return startHarness(t, srv, st)
	}
	h := open()
	lab := h.tenant("lab", 0)
	h.allowPriority("lab", 100)
	other := h.tenant("other", 0)
	h.allowPriority("other", 100)
	quick := h.submit(lab, api.JobRequest{GPUs: 4, Command: []string{"sleep", "600"}})
	slow := h.submit(lab, api.JobRequest{GPUs: 4, Grace: "3s", Command: sh("trap '' TERM; sleep 600")})
	h.waitState(lab, quick.ID, store.Running, 20*time.Second)
	h.waitState(lab, slow.ID, store.Running, 20*time.Second)
	claimant := h.submit(lab, api.JobRequest{GPUs: 8, Priority: 10, Command: []string{"sleep", "600"}})
	h.waitState(lab, quick.ID, store.Preempted, 20*time.Second)
	if rec, err := st.Get(mustID(t, claimant.ID)); err != nil || !rec.Claimed {
		t.Fatalf("stored claimant: claimed %v (%v), want its claim persisted", rec.Claimed, err)
	}

	h.crash() // slow ignores TERM: it is still stopping when the new server adopts it
	h = open()
	lab, other = &client.Client{Server: h.url, Token: lab.Token}, &client.Client{Server: h.url, Token: other.Token}
	later := h.submit(other, api.JobRequest{GPUs: 4, Priority: 10, Command: []string{"sleep", "600"}})
	h.waitState(lab, claimant.ID, store.Running, 20*time.Second)
	time.Sleep(5 * h.srv.cfg.Interval) // cycles with the claimant running
	if j, err := other.Job(context.Background(), later.ID); err != nil || j.State != string(store.Pending) {
		t.Errorf("later job: %s (%v), want it waiting behind the claimant", j.State, err)
	}
	if rec, err := st.Get(mustID(t, claimant.ID)); err != nil || rec.Claimed {
		t.Errorf("stored claimant: claimed %v (%v), want the claim ended with its start", rec.Claimed, err)
	}
}

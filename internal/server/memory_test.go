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

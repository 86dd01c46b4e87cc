package server

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// One tenant's backlog over quota must not hide another tenant's work: with
// alice at her quota and 1,004 of her jobs waiting, bob's job starts in the
// cycle his submission triggers.
func TestServerQuotaBacklogDoesNotStarveOthers(t *testing.T) {
	h := newHarness(t, 8)
	alice := h.tenant("alice", 4)
	bob := h.tenant("bob", 0)
	var running []string
	for range 4 {
		running = append(running, h.submit(alice, api.JobRequest{GPUs: 1, Command: []string{"sleep", "60"}}).ID)
	}
	for _, id := range running {
		h.waitState(alice, id, store.Running, 20*time.Second)
	}
	spec := store.Spec{GPUs: 1, Tasks: 1, Command: []string{"true"}}
	for range 1004 {
		j, err := h.st.Submit("alice", spec, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		h.srv.enqueue(j.ID)
	}
	h.waitCycle() // the backlog is in the waiting set
	j := h.submit(bob, api.JobRequest{GPUs: 1, Command: []string{"sleep", "60"}})
	submitted := time.Now()
	h.waitState(bob, j.ID, store.Running, 20*time.Second)
	t.Logf("bob's job ran %v after its submission, beside %d waiting jobs of alice", time.Since(submitted), 1004)
	jobs, err := alice.Jobs(context.Background(), url.Values{"state": {"pending"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1004 || !strings.Contains(jobs[0].Reason, ReasonQuota) {
		t.Fatalf("%d of alice's jobs pending, first reason %q; want 1004 waiting for quota", len(jobs), jobs[0].Reason)
	}
}

// Preemption must finish: sixteen low-priority jobs whose SIGTERM handlers
// take up to 0.8 s, then an 8-GPU job of higher priority. GPUs that victims
// free are held for it, and no job is preempted twice for it.
func TestServerPreemptionDoesNotThrash(t *testing.T) {
	h := newHarness(t, 8)
	c := h.tenant("team", 0)
	h.allowPriority("team", 10)
	for i := range 16 {
		delay := fmt.Sprintf("0.%d", i%9) // 0 to 0.8 s
		h.submit(c, api.JobRequest{Priority: 1, GPUs: 1, Grace: "10s",
			Command: sh(`trap 'sleep ` + delay + `; exit 0' TERM; while :; do sleep 0.05; done`)})
	}
	h.waitCycle()
	big := h.submit(c, api.JobRequest{Priority: 10, GPUs: 8, Command: []string{"sleep", "60"}})
	h.waitState(c, big.ID, store.Running, 30*time.Second)
	if n := testutil.ToFloat64(h.srv.metrics.preemptions); n > 16 {
		t.Fatalf("%v preemptions before the 8-GPU job ran, want at most 16", n)
	}
	jobs, err := c.Jobs(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Attempts > 2 {
			t.Errorf("job %s started %d times, want at most 2", j.ID, j.Attempts)
		}
	}
}

// A gang that waits holds a reservation: a 1-GPU job submitted after it,
// with no time limits anywhere, may not take the GPUs it waits for.
func TestServerGangHoldsReservation(t *testing.T) {
	h := newHarness(t, 8)
	c := h.tenant("team", 0)
	var running []string
	for range 6 {
		running = append(running, h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"sleep", "60"}}).ID)
	}
	for _, id := range running {
		h.waitState(c, id, store.Running, 20*time.Second)
	}
	gang := h.submit(c, api.JobRequest{GPUs: 2, Tasks: 2, Command: []string{"sleep", "60"}})
	small := h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"sleep", "60"}})
	h.waitCycle()
	h.waitCycle()
	pending, err := c.Jobs(context.Background(), url.Values{"state": {"pending"}})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(pending, func(j api.Job) bool { return j.ID == small.ID })
	if i < 0 || !strings.Contains(pending[i].Reason, "would delay "+gang.ID) {
		t.Fatalf("pending jobs %+v: want %s waiting behind the gang %s", pending, small.ID, gang.ID)
	}
	t.Logf("small job: %s", pending[i].Reason)
	for _, id := range running[:2] {
		c.Cancel(context.Background(), id)
	}
	h.waitState(c, gang.ID, store.Running, 20*time.Second)
	jobs, err := c.Jobs(context.Background(), url.Values{"state": {"running"}})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(jobs, func(j api.Job) bool { return j.ID == small.ID }) {
		t.Fatalf("the small job started beside the gang on %d GPUs", 8)
	}
}

// waitCycle returns after the scheduling loop has finished a cycle that
// began after the call.
func (h *harness) waitCycle() {
	h.t.Helper()
	h.srv.poke()
	time.Sleep(50 * time.Millisecond)
	h.srv.mu.Lock() // a cycle holds the lock while it runs
	h.srv.mu.Unlock()
	h.srv.poke()
	time.Sleep(50 * time.Millisecond)
	h.srv.mu.Lock()
	h.srv.mu.Unlock()
}

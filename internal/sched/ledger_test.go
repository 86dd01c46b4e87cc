package sched

import (
	"math"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/queue"
)

// Fair share is history: a queue's decayed usage stays what it was when
// the queues change around it, whether a tenant is created, a quota is
// changed or a tenant goes away.
func TestLedgerKeepsFairShareWhenQueuesChange(t *testing.T) {
	a, b := quota("a", 4), quota("b", 4)
	for _, tc := range []struct {
		name  string
		after []queue.Spec
	}{
		{"a tenant is created", []queue.Spec{a, b, quota("c", 4)}},
		{"b's quota changes", []queue.Spec{a, quota("b", 2)}},
		{"b goes away", []queue.Spec{a}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l Ledger
			running := []Running{{Name: "job-a", Queue: "a", Need: queue.GPUs(gpu, 2)}}
			if _, err := l.Sync([]queue.Spec{a, b}, running, t0); err != nil {
				t.Fatal(err)
			}
			book, err := l.Sync([]queue.Spec{a, b}, running, t0.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			before := book.DecayedUsage("a")
			if before <= 0 {
				t.Fatalf("a's decayed usage after an hour on 2 GPUs is %v, want > 0", before)
			}
			book, err = l.Sync(tc.after, running, t0.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if got := book.DecayedUsage("a"); math.Abs(got-before) > 1e-9 {
				t.Errorf("a's decayed usage %v after the queues changed, want %v as before", got, before)
			}
			if got := book.Usage("a")[gpu]; got != 2*queue.Milli {
				t.Errorf("a uses %d milli-GPUs after the change, want its running job's 2000", got)
			}
			book, err = l.Sync(tc.after, running, t0.Add(2*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if got := book.DecayedUsage("a"); got <= before {
				t.Errorf("a's decayed usage %v an hour later, want it above %v", got, before)
			}
		})
	}
}

// Use says what each queue holds, GPUs only: a queue of 2 GPUs running
// 4 (and a CPU-only job) borrows 2 from its cohort peer of 6, which lends
// them; nothing before the first Sync.
func TestLedgerUse(t *testing.T) {
	var l Ledger
	if use := l.Use(); use != nil {
		t.Fatalf("before a Sync: %v", use)
	}
	small, lender := quota("small", 2), quota("lender", 6)
	small.Cohort, lender.Cohort = "lab", "lab"
	running := []Running{
		{Name: "big", Queue: "small", Need: queue.GPUs(gpu, 4)},
		{Name: "cpu", Queue: "small", Need: queue.Amounts{queue.CPU: 4000}},
	}
	if _, err := l.Sync([]queue.Spec{small, lender}, running, t0); err != nil {
		t.Fatal(err)
	}
	want := []QueueUse{ // in the book's order: by name
		{Queue: "lender", Nominal: 6000, Lent: 2000},
		{Queue: "small", Used: 4000, Nominal: 2000, Borrowed: 2000},
	}
	got := l.Use()
	if len(got) != len(want) {
		t.Fatalf("Use: %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Use[%d]: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// Work that runs is charged when the queues shrink under it: small runs 4
// GPUs, 2 of them lent by lender; lender goes away. small then holds 4
// against its 2 (2 beyond its quota, lent by nobody), and nothing more is
// admitted to it until it is back within its quota. Before, the job was left
// uncharged, small looked empty, and 2 more GPUs were admitted to it.
func TestLedgerChargesRunningWorkWhenTheQueuesShrink(t *testing.T) {
	var l Ledger
	small, lender := quota("small", 2), quota("lender", 6)
	small.Cohort, lender.Cohort = "lab", "lab"
	running := []Running{{Name: "big", Queue: "small", Need: queue.GPUs(gpu, 4)}}
	if _, err := l.Sync([]queue.Spec{small, lender}, running, t0); err != nil {
		t.Fatal(err)
	}
	book, err := l.Sync([]queue.Spec{small}, running, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Use(); len(got) != 1 || got[0] != (QueueUse{Queue: "small", Used: 4000, Nominal: 2000, Borrowed: 2000}) {
		t.Errorf("Use after lender went: %+v, want small using 4 of its 2 GPUs", got)
	}
	if err := book.CanAdmit("small", queue.GPUs(gpu, 1)); err == nil {
		t.Errorf("small, over its quota, may admit 1 GPU more")
	}
	if _, err := l.Sync([]queue.Spec{small}, nil, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := book.CanAdmit("small", queue.GPUs(gpu, 2)); err != nil {
		t.Errorf("small, its job ended, may not admit its 2 GPUs: %v", err)
	}
}

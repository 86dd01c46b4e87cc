package sched

import (
	"errors"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/queue"
)

// One charge: what a unit asks of its queue before it is placed, for
// every kind of GPU demand, on a fleet of one MIG node of A100s and one
// node of H100s offered as 4 time slices.
func TestChargerNeed(t *testing.T) {
	mig, err := fleet.Synthetic{Nodes: 1, GPUsPerNode: 8, GPUModel: "A100-40GB", MIG: fleet.MIGDynamic}.Build()
	if err != nil {
		t.Fatal(err)
	}
	sliced, err := fleet.Synthetic{Nodes: 1, GPUsPerNode: 8}.Build()
	if err != nil {
		t.Fatal(err)
	}
	sliced.Nodes[0].Name, sliced.Nodes[0].TimeSlices = "sliced", 4
	mig.Nodes = append(mig.Nodes, sliced.Nodes[0])
	st, err := gang.New(mig)
	if err != nil {
		t.Fatal(err)
	}
	task := func(count int, d job.Demand) *job.Job {
		d.CPUMilli, d.MemoryMiB = 500, 1024
		return &job.Job{Name: "j", Groups: []job.Group{{Name: "w", Count: count, Task: d}}}
	}
	elastic := task(8, job.Demand{GPUs: 1})
	elastic.Elastic, elastic.MinMember = true, 2
	for _, tc := range []struct {
		name      string
		j         *job.Job
		resources bool
		want      queue.Amounts
	}{
		{"whole GPUs count in full", task(2, job.Demand{GPUs: 4}), false, queue.Amounts{gpu: 8000}},
		{"thousandths as asked", task(3, job.Demand{GPUMilli: 250}), false, queue.Amounts{gpu: 750}},
		{"a MIG instance its part of the fleet's A100", task(2, job.Demand{MIG: "3g.20gb"}), false, queue.Amounts{gpu: 2 * 428}},
		{"a time slice its part of a 4-sliced GPU", task(2, job.Demand{Shares: 1}), false, queue.Amounts{gpu: 500}},
		{"an elastic job its minimum size", elastic, false, queue.Amounts{gpu: 2000}},
		{"with resources, CPU and memory too", task(2, job.Demand{GPUs: 1}), true,
			queue.Amounts{gpu: 2000, queue.CPU: 1000, queue.Memory: 2048}},
		{"a CPU-only job no GPUs", task(2, job.Demand{}), true, queue.Amounts{queue.CPU: 1000, queue.Memory: 2048}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Charger{GPU: gpu, Resources: tc.resources}.Need(st, tc.j)
			if !got.Equal(tc.want) {
				t.Errorf("need %v, want %v", got, tc.want)
			}
		})
	}
}

// Placed charges what the node's GPU gives a placed unit, and never less
// than Need said.
func TestChargerPlacedAtLeastNeed(t *testing.T) {
	f, err := fleet.Synthetic{Nodes: 1, GPUsPerNode: 8}.Build()
	if err != nil {
		t.Fatal(err)
	}
	f.Nodes[0].Fractional = true
	st, err := gang.New(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []*job.Job{gpuJob("a", 2, 2, 0), {Name: "b", Groups: []job.Group{{Name: "w", Count: 3, Task: job.Demand{GPUMilli: 300, CPUMilli: 100}}}}} {
		p, ok := st.TryPlace(j)
		if !ok {
			t.Fatalf("%s does not fit", j.Name)
		}
		c := Charger{GPU: gpu, Resources: true}
		need, placed := c.Need(st, j), c.Placed(st, p)
		if !need.Fits(placed) || !placed.Equal(need) {
			t.Errorf("%s: placed charge %v, need %v: want them equal on whole GPUs and thousandths", j.Name, placed, need)
		}
	}
}

// The ceiling refuses only what no state of the queues admits: a queue's
// own quota plus all its cohort could lend, parents' quotas included.
func TestCeilingRefusesOnlyWhatNeverFits(t *testing.T) {
	alice, bob, carol := quota("alice", 2), quota("bob", 6), quota("carol", 4)
	alice.Cohort, bob.Cohort = "lab", "lab"
	limited := quota("bob", 6)
	limited.Cohort, limited.LendingLimit = "lab", queue.GPUs(gpu, 1)
	team, child := quota("team", 3), quota("dev", 8)
	child.Parent = "team"
	for _, tc := range []struct {
		name   string
		specs  []queue.Spec
		queue  string
		gpus   int64
		refuse string // "" admits; else the refusal's words
	}{
		{"within its own quota", []queue.Spec{alice, bob}, "alice", 2, ""},
		{"borrowing all its cohort lends", []queue.Spec{alice, bob}, "alice", 8, ""},
		{"beyond what its cohort lends", []queue.Spec{alice, bob}, "alice", 9,
			"alice can never hold more than 8 GPUs: its own 2 GPUs and 6 GPUs its cohort lab could lend; the job needs 9 GPUs"},
		{"a lending limit caps the loan", []queue.Spec{alice, limited}, "alice", 4,
			"alice can never hold more than 3 GPUs: its own 2 GPUs and 1 GPU its cohort lab could lend; the job needs 4 GPUs"},
		{"no cohort: its own quota", []queue.Spec{carol, bob}, "carol", 5,
			"carol can never hold more than 4 GPUs; the job needs 5 GPUs"},
		{"a parent's quota caps its child", []queue.Spec{team, child}, "dev", 4,
			"dev (through its parent team) can never hold more than 3 GPUs; the job needs 4 GPUs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCeiling(tc.specs)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Refuse(tc.queue, queue.GPUs(gpu, tc.gpus))
			switch {
			case tc.refuse == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refuse != "" && err == nil:
				t.Fatalf("admitted, want refused: %s", tc.refuse)
			case tc.refuse != "" && err.Error() != tc.refuse:
				t.Fatalf("refused with\n  %v\nwant\n  %s", err, tc.refuse)
			}
			var r *Refusal
			if tc.refuse != "" && !errors.As(err, &r) {
				t.Fatalf("refusal %T, want *Refusal", err)
			}
		})
	}
}

func TestCeilingUnknownQueue(t *testing.T) {
	c, err := NewCeiling([]queue.Spec{quota("a", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Refuse("nobody", queue.GPUs(gpu, 1)); err == nil || !errors.Is(err, queue.ErrUnknownQueue) {
		t.Fatalf("refusal %v, want one wrapping queue.ErrUnknownQueue", err)
	}
}

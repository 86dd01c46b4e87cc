package queue

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

// pj is a pending job for the tests.
type pj struct {
	name     string
	arrival  int64
	priority int
	runtime  time.Duration
}

func (p pj) job() *job.Job {
	return &job.Job{Name: p.name, Priority: p.priority, Runtime: p.runtime,
		Groups: []job.Group{{Name: "g", Count: 1, Task: job.Demand{GPUs: 1}}}}
}

func names(es []Entry) []string {
	out := make([]string, len(es))
	for k, e := range es {
		out[k] = e.Job.Name
	}
	return out
}

func TestOrderWithinQueue(t *testing.T) {
	jobs := []pj{
		{"e", 5, 0, 0},
		{"a", 1, 0, 3 * time.Hour},
		{"c", 3, 9, time.Hour},
		{"b", 2, 9, 0},
		{"d", 3, 1, time.Hour}, // arrives with c: c first by name
		{"f", 6, 9, 2 * time.Hour},
	}
	for _, c := range []struct {
		order Order
		want  []string
	}{
		{FIFO, []string{"a", "b", "c", "d", "e", "f"}},
		{PriorityFIFO, []string{"b", "c", "f", "d", "a", "e"}},
		{ShortestFirst, []string{"c", "d", "f", "a", "b", "e"}},
	} {
		t.Run(c.order.String(), func(t *testing.T) {
			b := mustBook(t, 0, Spec{Name: "q", Order: c.order})
			// Every push order gives the same queue order.
			r := rand.New(rand.NewPCG(1, 2))
			for range 20 {
				p := NewPending(b)
				for _, k := range r.Perm(len(jobs)) {
					if err := p.Push("q", jobs[k].job(), jobs[k].arrival); err != nil {
						t.Fatal(err)
					}
				}
				if got := names(p.Jobs("q")); !reflect.DeepEqual(got, c.want) {
					t.Fatalf("order %v: %v, want %v", c.order, got, c.want)
				}
			}
		})
	}
}

func TestPushRemove(t *testing.T) {
	b := mustBook(t, 0,
		Spec{Name: "org"},
		Spec{Name: "t", Parent: "org", Order: PriorityFIFO},
		Spec{Name: "u", Parent: "org"},
	)
	p := NewPending(b)
	j := pj{"x", 1, 5, 0}.job()
	if err := p.Push("t", j, 1); err != nil {
		t.Fatal(err)
	}
	if err := p.Push("u", pj{"x", 2, 0, 0}.job(), 2); !errors.Is(err, ErrDuplicateJob) {
		t.Errorf("second job named x: %v, want ErrDuplicateJob", err)
	}
	if err := p.Push("org", pj{"y", 2, 0, 0}.job(), 2); !errors.Is(err, ErrNotLeaf) {
		t.Errorf("push to a parent queue: %v, want ErrNotLeaf", err)
	}
	if err := p.Push("nope", pj{"y", 2, 0, 0}.job(), 2); !errors.Is(err, ErrUnknownQueue) {
		t.Errorf("push to an unknown queue: %v, want ErrUnknownQueue", err)
	}
	if err := p.Push("t", &job.Job{}, 3); err == nil {
		t.Error("push of a job with no name succeeded")
	}
	if err := p.Push("t", pj{"z", 0, 1, 0}.job(), 0); err != nil {
		t.Fatal(err)
	}
	// The order keys are read at Push: raising x's priority later does not
	// move it.
	j.Priority = 0
	if got := names(p.Jobs("t")); !reflect.DeepEqual(got, []string{"x", "z"}) {
		t.Errorf("Jobs(t) = %v, want [x z]", got)
	}
	e, ok := p.Remove("x")
	if !ok || e.Queue != "t" || e.Arrival != 1 || e.Job != j {
		t.Errorf("Remove(x) = %+v, %v", e, ok)
	}
	if _, ok := p.Remove("x"); ok {
		t.Error("x removed twice")
	}
	if p.Len() != 1 || !reflect.DeepEqual(names(p.Jobs("t")), []string{"z"}) {
		t.Errorf("after Remove: %d pending, t holds %v", p.Len(), names(p.Jobs("t")))
	}
	if err := p.Push("u", pj{"x", 2, 0, 0}.job(), 2); err != nil {
		t.Errorf("x again after its removal: %v", err)
	}
}

// TestGlobalOrder: queues by fair share (lowest first, ties by name), each
// queue's jobs in its own order.
func TestGlobalOrder(t *testing.T) {
	b := mustBook(t, time.Hour,
		Spec{Name: "busy", Nominal: gpu(8)},
		Spec{Name: "idle", Nominal: gpu(8), Order: PriorityFIFO},
		Spec{Name: "light", Nominal: gpu(8), Order: ShortestFirst},
		Spec{Name: "empty", Nominal: gpu(8)},
	)
	replay(t, b, []use{{"busy", 8, 0, time.Hour}, {"light", 1, 0, time.Hour}}, time.Hour)
	push := []struct {
		queue string
		pj
	}{
		{"busy", pj{"b1", 1, 0, 0}},
		{"busy", pj{"b2", 2, 0, 0}},
		{"light", pj{"l1", 3, 0, 0}},
		{"light", pj{"l2", 4, 0, time.Minute}},
		{"idle", pj{"i1", 5, 0, 0}},
		{"idle", pj{"i2", 6, 3, 0}},
	}
	want := []string{"i2", "i1", "l2", "l1", "b1", "b2"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		p := NewPending(b)
		for _, k := range r.Perm(len(push)) {
			if err := p.Push(push[k].queue, push[k].job(), push[k].arrival); err != nil {
				t.Fatal(err)
			}
		}
		if got := p.QueueOrder(); !reflect.DeepEqual(got, []string{"idle", "light", "busy"}) {
			t.Fatalf("QueueOrder = %v", got)
		}
		if got := names(p.Heads()); !reflect.DeepEqual(got, []string{"i2", "l2", "b1"}) {
			t.Fatalf("Heads = %v", got)
		}
		if got := names(slices.Collect(p.All())); !reflect.DeepEqual(got, want) {
			t.Fatalf("All = %v, want %v", got, want)
		}
	}
	// Removing while iterating does not disturb the iteration.
	p := NewPending(b)
	for _, x := range push {
		if err := p.Push(x.queue, x.job(), x.arrival); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	for e := range p.All() {
		seen = append(seen, e.Job.Name)
		p.Remove(e.Job.Name)
		if len(seen) == 3 {
			break
		}
	}
	if !reflect.DeepEqual(seen, want[:3]) || p.Len() != 3 {
		t.Errorf("removing while iterating: saw %v, %d left", seen, p.Len())
	}
}

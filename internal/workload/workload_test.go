package workload

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

func arrival(name string, at time.Duration) Arrival {
	j := &job.Job{Name: name, Groups: []job.Group{{Name: "task", Count: 1, Task: job.Demand{GPUs: 1}}}}
	return Arrival{At: at, Job: j, Duration: time.Hour, Class: Training}
}

func TestSortArrivals(t *testing.T) {
	a := []Arrival{arrival("b", 2), arrival("c", 1), arrival("a", 2), arrival("a2", 0)}
	SortArrivals(a)
	var got []string
	for _, x := range a {
		got = append(got, x.Job.Name)
	}
	if want := []string{"a2", "c", "a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v (by time, then name)", got, want)
	}
}

func TestMergeFaults(t *testing.T) {
	got := MergeFaults(
		[]Fault{{At: 5, Kind: NodeRepair, Node: "n1"}, {At: 9, Kind: NodeFailure, Node: "n1"}},
		[]Fault{{At: 5, Kind: NodeFailure, Node: "n1"}, {At: 5, Kind: SpotNotice, Node: "n0", Notice: 1}},
	)
	want := []Fault{
		{At: 5, Kind: SpotNotice, Node: "n0", Notice: 1},
		{At: 5, Kind: NodeFailure, Node: "n1"},
		{At: 5, Kind: NodeRepair, Node: "n1"},
		{At: 9, Kind: NodeFailure, Node: "n1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged %+v, want %+v", got, want)
	}
}

func TestWorkloadValidate(t *testing.T) {
	cases := []struct {
		name string
		w    Workload
		want string
	}{
		{"out of order", Workload{Arrivals: []Arrival{arrival("b", 2), arrival("a", 1)}}, "out of order"},
		{"same time, names out of order", Workload{Arrivals: []Arrival{arrival("b", 1), arrival("a", 1)}}, "out of order"},
		{"duplicate name", Workload{Arrivals: []Arrival{arrival("a", 1), arrival("a", 2)}}, `duplicate job name "a"`},
		{"no duration", Workload{Arrivals: []Arrival{func() Arrival { a := arrival("a", 1); a.Duration = 0; return a }()}}, "duration 0s"},
		{"invalid job", Workload{Arrivals: []Arrival{func() Arrival { a := arrival("a", 1); a.Job.Groups = nil; return a }()}}, "no task groups"},
		{"no class", Workload{Arrivals: []Arrival{func() Arrival { a := arrival("a", 1); a.Class = ""; return a }()}}, "no class"},
		{"unknown fault", Workload{Faults: []Fault{{At: 1, Kind: "meteor", Node: "n"}}}, `unknown kind "meteor"`},
		{"notice on a failure", Workload{Faults: []Fault{{At: 1, Kind: NodeFailure, Node: "n", Notice: 1}}}, "notice"},
		{"faults out of order", Workload{Faults: []Fault{{At: 2, Kind: NodeFailure, Node: "n"}, {At: 1, Kind: NodeRepair, Node: "n"}}}, "out of order"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.w.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	ok := Workload{Arrivals: []Arrival{arrival("a", 1), arrival("b", 1)}, Faults: []Fault{{At: 1, Kind: SpotNotice, Node: "n", Notice: 2}}}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid workload: %v", err)
	}
}

func TestForLoadCompressesArrivals(t *testing.T) {
	w := Workload{Horizon: 100 * time.Hour}
	for i := 0; i < 10; i++ {
		w.Arrivals = append(w.Arrivals, Arrival{At: time.Duration(i) * 10 * time.Hour, Duration: 2 * time.Hour,
			Job: &job.Job{Name: fmt.Sprint(i), Groups: []job.Group{{Name: "t", Count: 2, Task: job.Demand{GPUs: 1}}}}})
	}
	if got := w.GPUHours(); got != 40 {
		t.Fatalf("GPUHours = %v, want 40 (10 jobs x 2 GPUs x 2 h)", got)
	}
	// 40 GPU-hours over a 90 h span on 4 GPUs is a load of 1/9; a load of
	// 0.5 needs arrivals 4.5 times faster.
	c, factor := w.ForLoad(4, 0.5)
	if factor != 4.5 || c.Arrivals[9].At != 20*time.Hour || c.Arrivals[9].Duration != 2*time.Hour || c.Horizon != 20*time.Hour {
		t.Fatalf("factor %v, last arrival %v, duration %v, horizon %v", factor, c.Arrivals[9].At, c.Arrivals[9].Duration, c.Horizon)
	}
	if w.Arrivals[9].At != 90*time.Hour {
		t.Fatal("ForLoad changed the original")
	}
}

package peers

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

// Every gang is 64 to 512 GPUs of whole nodes, packed in a rack when it
// fits in one and in a block otherwise; every other job is one pod of 1
// to 4 GPUs; the same seed draws the same workload.
func TestBigGangsShape(t *testing.T) {
	f := NVL72(2, 8)
	if f.Nodes != 288 || f.Nodes*f.GPUs != 1152 {
		t.Fatalf("fleet %+v, want 288 nodes of 4 GPUs", f)
	}
	w := BigGangs(f, 40, 200, time.Hour, 7)
	if len(w.Arrivals) != 240 {
		t.Fatalf("%d arrivals, want 240", len(w.Arrivals))
	}
	sizes := map[int]int{}
	for _, a := range w.Arrivals {
		j := a.Job
		d := j.Groups[0].Task
		if !strings.HasPrefix(j.Name, "gang-") {
			if j.Tasks() != 1 || d.GPUs < 1 || d.GPUs > 4 || j.Topology != nil {
				t.Errorf("small job %s: %d tasks of %d GPUs, topology %v", j.Name, j.Tasks(), d.GPUs, j.Topology)
			}
			continue
		}
		gpus := j.Tasks() * d.GPUs
		sizes[gpus]++
		want := "block"
		if gpus <= 72 {
			want = "rack"
		}
		if d.GPUs != 4 || len(j.Topology) != 1 || j.Topology[0] != (job.Constraint{Level: want, Required: true}) {
			t.Errorf("gang %s: %d GPUs in tasks of %d, topology %v, want one of 4 packed in a %s", j.Name, gpus, d.GPUs, j.Topology, want)
		}
		if a.At < 0 || a.At >= time.Hour || a.Duration < 30*time.Minute || a.Duration > 90*time.Minute {
			t.Errorf("gang %s: at %v for %v", j.Name, a.At, a.Duration)
		}
	}
	for gpus := range sizes {
		if gpus != 64 && gpus != 128 && gpus != 256 && gpus != 512 {
			t.Errorf("a gang of %d GPUs", gpus)
		}
	}
	if sizes[64] == 0 || sizes[512] == 0 {
		t.Errorf("sizes %v: want 64 and 512 among 40 gangs", sizes)
	}
	if again := BigGangs(f, 40, 200, time.Hour, 7); !reflect.DeepEqual(again, w) {
		t.Error("the same seed drew another workload")
	}
	if load := OfferedLoad(w, f); load <= 0 {
		t.Errorf("offered load %v", load)
	}
}

// Node i's labels name its rack and block; a fleet without racks labels
// neither.
func TestFleetLabels(t *testing.T) {
	f := NVL72(2, 8)
	for _, tc := range []struct {
		i           int
		rack, block string
	}{{0, "r00", "b0"}, {17, "r00", "b0"}, {18, "r01", "b0"}, {143, "r07", "b0"}, {144, "r08", "b1"}, {287, "r15", "b1"}} {
		l := f.labels(tc.i)
		if l["corral.sh/rack"] != tc.rack || l["corral.sh/block"] != tc.block || l["type"] != "kwok" {
			t.Errorf("node %d: labels %v, want rack %s block %s", tc.i, l, tc.rack, tc.block)
		}
	}
	if l := (Fleet{Nodes: 4, GPUs: 8}).labels(3); len(l) != 1 {
		t.Errorf("a fleet without racks labels %v", l)
	}
}

// A gang on more racks than its GPUs need, or across blocks, is counted;
// waits are from arrival to the last task's binding.
func TestMeasureGangs(t *testing.T) {
	f := NVL72(2, 3) // racks of 18 nodes: r00-r02 in b0, r03-r05 in b1
	gang := func(name string, tasks int, at time.Duration) workload.Arrival {
		return workload.Arrival{At: at, Duration: time.Hour, Job: &job.Job{Name: name, Groups: []job.Group{{Count: tasks, Task: job.Demand{GPUs: 4}}}}}
	}
	w := workload.Workload{Horizon: time.Hour, Arrivals: []workload.Arrival{
		gang("tight", 16, 0),              // 64 GPUs: one rack
		gang("spread", 32, 0),             // 128 GPUs: two racks, placed on three
		gang("across", 2, 10*time.Minute), // two racks of two blocks
		gang("never", 16, 0),
		gang("pod", 1, 0),
	}}
	var holds []Hold
	place := func(name string, from float64, nodes ...int) {
		for k, n := range nodes {
			holds = append(holds, hold(name, fmt.Sprint(k), NodeName(n), 4, from, from+60))
		}
	}
	place("tight", 5, seq(0, 16)...)
	place("spread", 20, append(seq(18, 36), append(seq(36, 48), seq(0, 2)...)...)...)
	place("across", 30, 17, 54)
	place("pod", 1, 40)
	res := &Result{Jobs: &workload.Jobs{Workload: w, Outcomes: map[string]workload.Outcome{
		"tight": {Start: 5 * time.Minute, Started: true}, "spread": {Start: 20 * time.Minute, Started: true},
		"across": {Start: 30 * time.Minute, Started: true}, "pod": {Start: time.Minute, Started: true, End: time.Hour, Ended: true},
	}}, Holds: holds}
	s := MeasureGangs(w, res, f)
	if s.Gangs != 4 || s.GangsStarted != 3 || s.Small != 1 || s.SmallStarted != 1 {
		t.Errorf("counts %+v", s)
	}
	if s.RacksOver != 2 || s.BlocksOver != 1 {
		t.Errorf("racks over %d, blocks over %d; want 2 (spread, across) and 1 (across)", s.RacksOver, s.BlocksOver)
	}
	if s.GangWaitP50M != 20 || s.GangWaitP99M != 20 || s.SmallWaitP50M != 1 || s.LastEndM != 60 {
		t.Errorf("waits %+v", s)
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// A job packed in a level the replay's fleet does not label is refused,
// not replayed without its constraint.
func TestRequiredPackRefusesUnknownLevels(t *testing.T) {
	level, label, err := requiredPack(&job.Job{Topology: []job.Constraint{{Level: "rack", Spread: true, Required: true}, {Level: "block", Required: true}}})
	if err != nil || level != "block" || label != "corral.sh/block" {
		t.Errorf("got %q %q %v, want block corral.sh/block (a spread is no pack)", level, label, err)
	}
	if _, _, err := requiredPack(&job.Job{Topology: []job.Constraint{{Level: "zone", Required: true}}}); err == nil {
		t.Error("a zone pack was accepted")
	}
	if level, _, err := requiredPack(&job.Job{Topology: []job.Constraint{{Level: "rack"}}}); err != nil || level != "" {
		t.Errorf("a preferred pack: %q %v, want none", level, err)
	}
}

// A gang's room is the first minute one domain of its level has a node
// free of other jobs for each of its tasks.
func TestGangRoom(t *testing.T) {
	f := NVL72(1, 2) // r00: nodes 0-17, r01: 18-35
	a := workload.Arrival{At: 5 * time.Minute, Job: &job.Job{Name: "g", Groups: []job.Group{{Count: 16, Task: job.Demand{GPUs: 4}}},
		Topology: []job.Constraint{{Level: "rack", Required: true}}}}
	var holds []Hold
	for _, n := range []int{0, 1, 2} {
		holds = append(holds, hold("a", fmt.Sprint(n), NodeName(n), 4, 0, 20)) // r00 short of 16 until 20
	}
	for _, n := range []int{18, 19, 20} {
		holds = append(holds, hold("b", fmt.Sprint(n), NodeName(n), 1, 0, 12)) // r01 short of 16 until 12
	}
	holds = append(holds, hold("g", "0", NodeName(18), 4, 30, 90))
	w := workload.Workload{Horizon: time.Hour, Arrivals: []workload.Arrival{a}}
	res := &Result{Jobs: &workload.Jobs{Workload: w, Outcomes: map[string]workload.Outcome{"g": {Start: 30 * time.Minute, Started: true}}}, Holds: holds}
	g := Gangs(w, res, f)
	if len(g) != 1 || !g[0].HasRoom || g[0].Room != 7*time.Minute || g[0].Wait != 25*time.Minute || g[0].Level != "rack" {
		t.Fatalf("gangs %+v, want room 7m after arrival (minute 12), wait 25m", g)
	}
	// Had other jobs held both racks until it started, it had no room.
	for _, n := range []int{3, 4, 5, 21, 22, 23} {
		holds = append(holds, hold("c", fmt.Sprint(n), NodeName(n), 4, 0, 40))
	}
	res.Holds = holds
	if g := Gangs(w, res, f); g[0].HasRoom {
		t.Errorf("room %v, want none", g[0].Room)
	}
	// Without a level, the fleet's free nodes count together: 36 less
	// the 6 held until 40 and the 6 held until 20 and 12, 24 of them.
	a.Job.Topology = nil
	w.Arrivals[0] = a
	if g := Gangs(w, res, f); !g[0].HasRoom || g[0].Room != 0 {
		t.Errorf("no level: room %v (%v), want at once", g[0].Room, g[0].HasRoom)
	}
}

package peers

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

// NVL72 is a fleet of GB200 NVL72-like racks: blocks of racks of 18 nodes
// of 4 GPUs, each rack one NVLink domain of 72 GPUs.
func NVL72(blocks, racksPerBlock int) Fleet {
	return Fleet{Nodes: blocks * racksPerBlock * 18, GPUs: 4, Product: "NVIDIA-GB200", RackNodes: 18, BlockRacks: racksPerBlock}
}

// BigGangs is a workload where large gangs hurt: gangs of 64, 128, 256
// and 512 GPUs (in the ratio 6:3:2:1, a task per node of f) with 30 to
// 90 minutes of work, each required to stay in one rack when it fits in
// one and in one block otherwise, among small single-pod jobs of 1, 2 or
// 4 GPUs with 5 to 30 minutes of work; all of one tenant and one priority,
// arriving uniformly over span, drawn from seed.
func BigGangs(f Fleet, gangs, small int, span time.Duration, seed uint64) workload.Workload {
	rng := rand.New(rand.NewPCG(seed, 0))
	rackGPUs := f.RackNodes * f.GPUs
	var w workload.Workload
	add := func(name string, d job.Demand, tasks int, run time.Duration, topo []job.Constraint) {
		a := workload.Arrival{At: time.Duration(rng.Int64N(int64(span))).Round(time.Second), Class: workload.Recorded, Duration: run,
			Job: &job.Job{Name: name, Tenant: "research", Groups: []job.Group{{Name: "tasks", Count: tasks, Task: d}}, Topology: topo}}
		w.Arrivals = append(w.Arrivals, a)
		w.Horizon = max(w.Horizon, a.At)
	}
	sizes := []int{64, 64, 64, 64, 64, 64, 128, 128, 128, 256, 256, 512}
	for i := range gangs {
		gpus := sizes[rng.IntN(len(sizes))]
		level := "block"
		if gpus <= rackGPUs {
			level = "rack"
		}
		run := time.Duration(30+rng.IntN(61)) * time.Minute
		add(fmt.Sprintf("gang-%03d", i), job.Demand{GPUs: f.GPUs, CPUMilli: 32000, MemoryMiB: 256 << 10}, gpus/f.GPUs, run,
			[]job.Constraint{{Level: level, Required: true}})
	}
	for i := range small {
		gpus := []int{1, 2, 4}[rng.IntN(3)]
		run := time.Duration(5+rng.IntN(26)) * time.Minute
		add(fmt.Sprintf("pod-%04d", i), job.Demand{GPUs: gpus, CPUMilli: 4000, MemoryMiB: 16 << 10}, 1, run, nil)
	}
	workload.SortArrivals(w.Arrivals)
	return w
}

// OfferedLoad is w's GPU-time over f's GPUs for w's arrival window.
func OfferedLoad(w workload.Workload, f Fleet) float64 {
	var work float64
	for _, a := range w.Arrivals {
		work += gpuTime(a).Minutes()
	}
	return work / (float64(f.Nodes*f.GPUs) * w.Horizon.Minutes())
}

// GangStats is how a replay treated a workload's gangs and its single
// pods; waits in simulated minutes.
type GangStats struct {
	Gangs, GangsStarted int
	GangWaitP50M        float64 `json:"gang_wait_p50_min"`
	GangWaitP99M        float64 `json:"gang_wait_p99_min"`
	Small, SmallStarted int
	SmallWaitP50M       float64 `json:"small_wait_p50_min"`
	SmallWaitP99M       float64 `json:"small_wait_p99_min"`
	// RacksOver are the started gangs that hold more racks than their
	// GPUs need; BlocksOver those that hold more than one block.
	RacksOver, BlocksOver int
	// IdlePct is the mean share of the fleet's GPUs no task held while
	// jobs arrived; SiblingGPUMin the GPU-minutes held by a gang's tasks
	// before its last task was bound.
	IdlePct       float64 `json:"idle_pct"`
	SiblingGPUMin float64 `json:"sibling_wait_gpu_min"`
	// LastEndM is when the last job ended, from the first arrival.
	LastEndM float64 `json:"last_end_min"`
}

// GangPlacement is how a replay started one gang.
type GangPlacement struct {
	Name          string
	GPUs          int
	Level         string // the level it must be packed in
	Started       bool
	Wait          time.Duration // from arrival to its last task's binding
	Racks, Blocks int           // the domains its tasks held then
	// NeedRacks is the fewest racks its GPUs fit in.
	NeedRacks int
	// Room is how long after its arrival one domain of its level first
	// had as many nodes that no other job held as it has tasks (checked
	// each simulated minute, and at its start): when it could have
	// started, were its tasks moved to those nodes. Known (HasRoom) only
	// for a gang of whole-node tasks that started.
	Room    time.Duration
	HasRoom bool
}

// Gangs are res's gangs of w on f, in arrival order.
func Gangs(w workload.Workload, res *Result, f Fleet) []GangPlacement {
	var out []GangPlacement
	rackGPUs := f.RackNodes * f.GPUs
	for _, a := range w.Arrivals {
		if a.Job.Tasks() < 2 {
			continue
		}
		g := GangPlacement{Name: a.Job.Name, GPUs: a.Job.Tasks() * a.Job.Groups[0].Task.GPUs}
		g.Level, _, _ = requiredPack(a.Job)
		g.NeedRacks = (g.GPUs + rackGPUs - 1) / max(rackGPUs, 1)
		if o := res.Outcomes[a.Job.Name]; o.Started {
			g.Started, g.Wait = true, o.Start-a.At
			g.Racks, g.Blocks = f.domainsAt(res.Holds, a.Job.Name, o.Start)
			if a.Job.Groups[0].Task.GPUs == f.GPUs {
				g.Room, g.HasRoom = f.firstRoom(res.Holds, a, o.Start, g.Level)
			}
		}
		out = append(out, g)
	}
	return out
}

// MeasureGangs reads res, a replay of w on f, as GangStats.
func MeasureGangs(w workload.Workload, res *Result, f Fleet) GangStats {
	var s GangStats
	var gangWaits, smallWaits []time.Duration
	tasks := map[string]int{}
	for _, a := range w.Arrivals {
		tasks[a.Job.Name] = a.Job.Tasks()
		if o := res.Outcomes[a.Job.Name]; o.Ended {
			s.LastEndM = max(s.LastEndM, o.End.Minutes())
		}
		if a.Job.Tasks() > 1 {
			continue
		}
		s.Small++
		if o := res.Outcomes[a.Job.Name]; o.Started {
			s.SmallStarted++
			smallWaits = append(smallWaits, o.Start-a.At)
		}
	}
	for _, g := range Gangs(w, res, f) {
		s.Gangs++
		if !g.Started {
			continue
		}
		s.GangsStarted++
		gangWaits = append(gangWaits, g.Wait)
		if g.Racks > g.NeedRacks {
			s.RacksOver++
		}
		if g.Blocks > 1 {
			s.BlocksOver++
		}
	}
	s.GangWaitP50M, s.GangWaitP99M = Quantile(gangWaits, 0.5).Minutes(), Quantile(gangWaits, 0.99).Minutes()
	s.SmallWaitP50M, s.SmallWaitP99M = Quantile(smallWaits, 0.5).Minutes(), Quantile(smallWaits, 0.99).Minutes()
	u := MeasureHolds(res.Holds, f.Nodes, f.GPUs, tasks, w.Horizon, 30*time.Minute)
	s.IdlePct, s.SiblingGPUMin = 100-u.AllocatedPct, u.SiblingGPUMin
	return s
}

// domainsAt counts the racks and blocks of the nodes that job's tasks
// held at simulated time at.
func (f Fleet) domainsAt(holds []Hold, jobName string, at time.Duration) (racks, blocks int) {
	rs, bs := map[string]bool{}, map[string]bool{}
	for _, h := range holds {
		if h.Job != jobName || h.From > at || h.To < at {
			continue
		}
		i, ok := nodeIndex(h.Node)
		if !ok {
			continue
		}
		rs[f.Rack(i)], bs[f.Block(i)] = true, true
	}
	return len(rs), len(bs)
}

// firstRoom is how long after a arrived one domain of level (the whole
// fleet for none) first had as many nodes free of every other job as a
// has tasks, looking each simulated minute up to start, and at start.
func (f Fleet) firstRoom(holds []Hold, a workload.Arrival, start time.Duration, level string) (time.Duration, bool) {
	domain := func(int) string { return "" } // no level: the whole fleet
	switch level {
	case "rack":
		domain = f.Rack
	case "block":
		domain = f.Block
	}
	for t := a.At; ; t += time.Minute {
		t = min(t, start)
		busy := map[int]bool{}
		for _, h := range holds {
			if h.Job != a.Job.Name && h.From <= t && h.To > t {
				if i, ok := nodeIndex(h.Node); ok {
					busy[i] = true
				}
			}
		}
		free := map[string]int{}
		for i := range f.Nodes {
			if !busy[i] {
				free[domain(i)]++
			}
		}
		for _, n := range free {
			if n >= a.Job.Tasks() {
				return t - a.At, true
			}
		}
		if t == start {
			return 0, false
		}
	}
}

// nodeIndex is i for NodeName(i).
func nodeIndex(name string) (int, bool) {
	i, err := strconv.Atoi(strings.TrimPrefix(name, "gpu-"))
	return i, err == nil && strings.HasPrefix(name, "gpu-")
}

package peers

import (
	"cmp"
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/gang"
)

// Usage is how a replay used the fleet over simulated time.
//
// Allocated GPUs are GPUs bound to a task; stranded GPUs are the free
// GPUs of nodes in partial use, which a task of a whole node cannot take
// (bench/kube counts them so too). Both are averaged over the arrival
// window, when work is offered, and per Bin of the replay in Series.
type Usage struct {
	AllocatedPct float64 `json:"allocated_pct"` // mean share of the fleet's GPUs allocated over the arrival window
	StrandedGPUs float64 `json:"stranded_gpus"` // mean free GPUs on partly used nodes over the arrival window
	// SiblingGPUMin are GPU-minutes held by tasks of multi-task jobs
	// before the job's last task was bound: GPUs a gang holds while it
	// cannot run yet.
	SiblingGPUMin float64 `json:"sibling_wait_gpu_min"`
	// Gangs are multi-task jobs that started; GangsWhole those whose
	// tasks were all first bound within GangTolerance of each other.
	Gangs      int      `json:"gangs"`
	GangsWhole int      `json:"gangs_whole"`
	Bin        float64  `json:"bin_min"`
	Series     []Sample `json:"series"`
}

// Sample is the mean allocation of one bin of simulated time.
type Sample struct {
	FromMin   float64 `json:"from_min"`
	Allocated float64 `json:"allocated_gpus"`
	Stranded  float64 `json:"stranded_gpus"`
}

// GangTolerance is how far apart in simulated time a gang's first
// bindings may lie for it to count as started whole: a binding cycle of
// one real second at 30x.
const GangTolerance = 30 * time.Second

// Meter integrates the allocation of a fleet of equal nodes over time:
// Set says what a node holds, and Advance(t) counts the state as Set so
// far for the time from the previous Advance to t.
type Meter struct {
	perNode int
	window  time.Duration
	bin     time.Duration
	alloc   []int
	last    time.Duration
	sums    [2]float64   // GPU-seconds allocated, stranded, over the window
	bins    [][2]float64 // the same per bin
}

// NewMeter meters nodes of perNode GPUs each; window is the arrival
// window the means cover, bin the width of Series' samples.
func NewMeter(nodes, perNode int, window, bin time.Duration) *Meter {
	return &Meter{perNode: perNode, window: window, bin: bin, alloc: make([]int, nodes)}
}

// Set says node i now has gpus allocated.
func (m *Meter) Set(i, gpus int) { m.alloc[i] = gpus }

// Advance integrates the present state up to t.
func (m *Meter) Advance(t time.Duration) {
	if t <= m.last {
		return
	}
	allocated, stranded := 0, 0
	for _, a := range m.alloc {
		allocated += a
		if a > 0 && a < m.perNode {
			stranded += m.perNode - a
		}
	}
	for from := m.last; from < t; {
		b := int(from / m.bin)
		to := min(t, time.Duration(b+1)*m.bin)
		for len(m.bins) <= b {
			m.bins = append(m.bins, [2]float64{})
		}
		d := (to - from).Seconds()
		m.bins[b][0] += float64(allocated) * d
		m.bins[b][1] += float64(stranded) * d
		if in := min(to, m.window) - from; in > 0 {
			m.sums[0] += float64(allocated) * in.Seconds()
			m.sums[1] += float64(stranded) * in.Seconds()
		}
		from = to
	}
	m.last = t
}

// Observe meters a model's fleet, as sim.Options.Observe: st is the state
// since the previous call, until at.
func (m *Meter) Observe(at time.Duration, st *gang.State) {
	nodes := st.Fleet().Nodes
	for i := range nodes {
		m.Set(i, nodes[i].GPUs-st.FreeGPUs(i))
	}
	m.Advance(at)
}

// ModelUsage is a model's usage: its sibling wait is the simulator's
// GPU-hours held idle, and its gangs are not counted (GangsWhole -1).
func (m *Meter) ModelUsage(idleHeldGPUH float64) Usage {
	u := m.Usage()
	u.SiblingGPUMin, u.GangsWhole = round2(60*idleHeldGPUH), -1
	return u
}

// Usage is what was metered; gang figures are left to the caller.
func (m *Meter) Usage() Usage {
	u := Usage{Bin: m.bin.Minutes()}
	if w := m.window.Seconds(); w > 0 {
		u.AllocatedPct = round2(100 * m.sums[0] / w / float64(m.perNode*len(m.alloc)))
		u.StrandedGPUs = round2(m.sums[1] / w)
	}
	for i, b := range m.bins {
		s := m.bin.Seconds()
		u.Series = append(u.Series, Sample{FromMin: (time.Duration(i) * m.bin).Minutes(), Allocated: round2(b[0] / s), Stranded: round2(b[1] / s)})
	}
	return u
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

// MeasureHolds meters a real replay's holds on a fleet of nodes of
// perNode GPUs each (at least as many nodes as the holds name), and
// measures its gangs: tasks gives each job's task count.
func MeasureHolds(holds []Hold, nodes, perNode int, tasks map[string]int, window, bin time.Duration) Usage {
	type change struct {
		at   time.Duration
		node string
		gpus int
	}
	var changes []change
	for _, h := range holds {
		changes = append(changes, change{h.From, h.Node, h.GPUs}, change{h.To, h.Node, -h.GPUs})
	}
	// Ends before starts at the same moment: a task that ends frees its
	// GPUs for the one bound in its place.
	slices.SortStableFunc(changes, func(a, b change) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.gpus, b.gpus)) })
	index := map[string]int{}
	for _, c := range changes {
		if _, ok := index[c.node]; !ok {
			index[c.node] = len(index)
		}
	}
	nodes = max(nodes, len(index))
	m := NewMeter(nodes, perNode, window, bin)
	held := make([]int, nodes)
	for _, c := range changes {
		i := index[c.node]
		m.Advance(c.at)
		held[i] += c.gpus
		m.Set(i, held[i])
	}
	u := m.Usage()
	u.SiblingGPUMin, u.Gangs, u.GangsWhole = gangFigures(holds, tasks)
	return u
}

// gangFigures measures the multi-task jobs of holds: GPU-minutes held
// before each one's last task was first bound, how many started, and how
// many of those started whole.
func gangFigures(holds []Hold, tasks map[string]int) (siblingMin float64, gangs, whole int) {
	first := map[string]map[string]time.Duration{} // job -> task -> first binding
	for _, h := range holds {
		if tasks[h.Job] < 2 {
			continue
		}
		if first[h.Job] == nil {
			first[h.Job] = map[string]time.Duration{}
		}
		if t, ok := first[h.Job][h.Task]; !ok || h.From < t {
			first[h.Job][h.Task] = h.From
		}
	}
	last := map[string]time.Duration{}
	for job, ts := range first {
		if len(ts) < tasks[job] {
			continue // never started
		}
		lo, hi := time.Duration(1<<62), time.Duration(0)
		for _, t := range ts {
			lo, hi = min(lo, t), max(hi, t)
		}
		last[job] = hi
		gangs++
		if hi-lo <= GangTolerance {
			whole++
		}
	}
	for _, h := range holds {
		if l, ok := last[h.Job]; ok && h.From < l {
			siblingMin += float64(h.GPUs) * (min(h.To, l) - h.From).Minutes()
		}
	}
	return round2(siblingMin), gangs, whole
}

package sched

import (
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/queue"
)

// Charger is how quotas count work, the one rule every face and the
// simulator charge by: GPUs in thousandths (gang.State.LeastMilli before a
// unit is placed, gang.State.PlacedMilli once it is), so that a MIG
// instance, a time slice or a memory fraction counts the same everywhere.
type Charger struct {
	// GPU is the flavor GPUs are charged to.
	GPU queue.Flavor
	// Resources: the CPU and memory tasks ask for count too (queue.CPU
	// and queue.Memory), for faces whose quotas cap them.
	Resources bool
	// ByModel: the GPUs of each model count too (queue.ModelCap), for
	// faces whose quotas cap models. Before a unit is placed only a job
	// that allows one model is charged its model; the cycle places the
	// others on models whose caps have room (modelRoom).
	ByModel bool
}

// Need is what j charges its queue, known before it is placed: its GPUs
// wherever it lands (gang.State.LeastMilli) and, with Resources, the CPU
// and memory its tasks ask for. An elastic job of one task shape is
// charged for its minimum size: the tasks it runs beyond that are
// opportunistic, and it gives them back first when others need the room.
func (c Charger) Need(st *gang.State, j *job.Job) queue.Amounts {
	if r, err := st.Resolve(j); err == nil {
		j = r // a job that asks by GPU memory: the shape chosen for it
	}
	j = chargedSize(j)
	n := queue.Amounts{}
	if m := st.LeastMilli(j); m > 0 {
		n[c.GPU] = m
		if model := onlyModel(j); c.ByModel && model != "" {
			n[queue.ModelCap(model)] = m
		}
	}
	if c.Resources {
		for _, g := range j.Groups {
			add(n, queue.CPU, g.Task.CPUMilli*int64(g.Count))
			add(n, queue.Memory, g.Task.MemoryMiB*int64(g.Count))
		}
	}
	return n
}

// Placed is what a unit placed as p charges its queue: what its GPUs
// give it (gang.State.PlacedMilli: a share or a MIG instance counts what
// its node's GPU gives) and, with Resources, the CPU and memory placed.
// An elastic job of one task shape is charged for its minimum size, as in
// Need.
func (c Charger) Placed(st *gang.State, p *gang.Placement) queue.Amounts {
	n := queue.Amounts{}
	tasks, charged := len(p.Tasks), len(p.Tasks)
	if j := p.Spec(); j != nil {
		charged = chargedSize(j).Tasks()
	}
	scale := func(v int64) int64 {
		if tasks == 0 || charged >= tasks {
			return v
		}
		return v * int64(charged) / int64(tasks)
	}
	if m := scale(st.PlacedMilli(p)); m > 0 {
		n[c.GPU] = m
	}
	if c.ByModel {
		for _, t := range p.Tasks {
			model := st.Fleet().Nodes[t.Node].GPUModel
			add(n, queue.ModelCap(model), scale(st.PlacedMilli(&gang.Placement{Tasks: []gang.Task{t}})))
		}
	}
	if c.Resources {
		var cpu, mem int64
		for _, t := range p.Tasks {
			cpu, mem = cpu+t.CPUMilli, mem+t.MemoryMiB
		}
		add(n, queue.CPU, scale(cpu))
		add(n, queue.Memory, scale(mem))
	}
	return n
}

// onlyModel is the one GPU model (catalog name) every group of j allows,
// or "" when j allows several or any.
func onlyModel(j *job.Job) string {
	model := ""
	for _, g := range j.Groups {
		if g.Task.Kind() == job.CPUOnly {
			continue
		}
		if len(g.Task.Models) != 1 {
			return ""
		}
		m := catalogName(g.Task.Models[0])
		if model != "" && m != model {
			return ""
		}
		model = m
	}
	return model
}

// chargedSize is j at the size it is charged for: an elastic job of one
// task shape at its minimum, any other job as it is.
func chargedSize(j *job.Job) *job.Job {
	if !j.Elastic || len(j.Groups) != 1 || j.MinTasks() >= j.Tasks() {
		return j
	}
	small := *j
	small.Groups = []job.Group{j.Groups[0]}
	small.Groups[0].Count = j.MinTasks()
	return &small
}

func add(a queue.Amounts, f queue.Flavor, v int64) {
	if v > 0 {
		a[f] += v
	}
}

package job

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/placement"
)

// Job is a gang: task groups placed together in one decision or not at all.
type Job struct {
	Name     string
	Tenant   string
	Queue    string // the queue it is submitted to; empty means the tenant's
	Priority int
	Groups   []Group
	// MinMember is the fewest tasks that may start together; below it
	// nothing starts. 0 means every task (a strict gang). A job with
	// MinMember below its task count starts with as many tasks as fit,
	// dropped from the last group first.
	MinMember int
	// Elastic marks a job that may grow back to its full size, or shrink
	// to MinMember, while it runs.
	Elastic bool
	// Topology constrains where tasks land, innermost constraint first or
	// in any order; each names one level.
	Topology []Constraint
	// Preemptible marks work that may be stopped to make room; with a short
	// enough Runtime it may borrow hot spare nodes.
	Preemptible bool
	// Runtime is the expected run time, 0 when unknown.
	Runtime time.Duration
	// CheckpointEvery is how often the job saves its progress; 0 means it
	// does not, and stopping it loses all its work.
	CheckpointEvery time.Duration
	// Tolerations name the node taints the job accepts (for example
	// "spot").
	Tolerations []string
	// ByGPUMemory, when set, asks for GPU memory in all instead of GPUs:
	// the core resolves it into Groups of one model (gang.State.Resolve)
	// and records what it chose in Shape. Groups then hold at most one
	// group giving each task's CPU and memory.
	ByGPUMemory *MemoryAsk
	// Shape is what the core chose for ByGPUMemory; nil before it
	// resolved the job, and for jobs that ask for GPUs.
	Shape *MemoryShape
	// Images are the container images its tasks run. Among nodes the
	// placement rates alike, those holding more of their bytes
	// (fleet.Node.Images) come first: the tasks start without pulling.
	Images []string
}

// Asks reports whether j asks by GPU memory and is not yet resolved.
func (j *Job) Asks() bool { return j.ByGPUMemory != nil && j.Shape == nil }

// Tolerates reports whether j accepts every one of taints.
func (j *Job) Tolerates(taints []string) bool {
	for _, t := range taints {
		if !slices.Contains(j.Tolerations, t) {
			return false
		}
	}
	return true
}

// MayBorrowSpares reports whether j is short preemptible work: preemptible,
// with a known runtime no longer than limit.
func (j *Job) MayBorrowSpares(limit time.Duration) bool {
	return j.Preemptible && j.Runtime > 0 && j.Runtime <= limit
}

// Group is Count identical tasks.
type Group struct {
	Name  string
	Count int
	Task  Demand
	// Tolerations are node taints this group's tasks accept beyond the
	// job's: a face whose tasks may run on different nodes (Kubernetes'
	// filter plugins allow each pod its own nodes) says so per group.
	Tolerations []string
}

// TolerationsOf is what group g's tasks accept: the job's tolerations
// and the group's own.
func (j *Job) TolerationsOf(g int) []string {
	if len(j.Groups[g].Tolerations) == 0 {
		return j.Tolerations
	}
	return append(slices.Clip(j.Tolerations), j.Groups[g].Tolerations...)
}

// Demand is what one task asks for. At most one of GPUs, MIG, Shares,
// GPUMemoryMiB and GPUMilli is set; none means a CPU-only task.
type Demand struct {
	GPUs         int    // whole GPUs on one node
	WholeNode    bool   // with GPUs: the task takes every GPU of a node with at least GPUs
	MIG          string // a MIG profile, for example "1g.10gb"
	Shares       int    // time-sliced shares of one GPU
	GPUMemoryMiB int64  // a memory fraction of one GPU
	GPUMilli     int    // a fraction of one GPU in thousandths, 1..999
	CPUMilli     int64
	MemoryMiB    int64
	Models       []string // allowed GPU models; empty means any
}

// Kind says how a demand uses GPUs.
type Kind int

// Demand kinds.
const (
	CPUOnly Kind = iota
	Whole
	MIG
	Shared // Shares, GPUMemoryMiB or GPUMilli
)

// Kind reports how d uses GPUs.
func (d Demand) Kind() Kind {
	switch {
	case d.GPUs > 0:
		return Whole
	case d.MIG != "":
		return MIG
	case d.Shares > 0 || d.GPUMemoryMiB > 0 || d.GPUMilli > 0:
		return Shared
	}
	return CPUOnly
}

// Constraint keeps a job's tasks together (pack) or apart (spread) at one
// topology level. A spread cap counts the tasks of each group separately.
type Constraint struct {
	Level    string // a fleet level name, "node" or "nvlink"
	Required bool   // false: preferred, best effort
	Spread   bool   // spread tasks across domains instead of packing
	// MaxPerDomain caps tasks per domain when spreading; 0 means 1.
	MaxPerDomain int
}

// Tasks is the number of tasks the job asks for.
func (j *Job) Tasks() int {
	n := 0
	for _, g := range j.Groups {
		n += g.Count
	}
	return n
}

// MinTasks is the fewest tasks the job can start with.
func (j *Job) MinTasks() int {
	if j.MinMember == 0 {
		return j.Tasks()
	}
	return j.MinMember
}

// Validate reports everything wrong with j.
func (j *Job) Validate() error {
	if j.Name == "" {
		return errors.New("job with no name")
	}
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("job %q: "+format, append([]any{j.Name}, args...)...))
	}
	if j.Asks() {
		if err := j.validateAsk(); err != nil {
			add("%w", err)
		}
	} else if len(j.Groups) == 0 {
		add("no task groups")
	}
	for i, g := range j.Groups {
		if err := g.validate(); err != nil {
			add("group %d: %v", i, err)
		}
	}
	if j.Runtime < 0 || j.CheckpointEvery < 0 {
		add("negative runtime %v or checkpoint interval %v", j.Runtime, j.CheckpointEvery)
	}
	if j.MinMember < 0 || j.MinMember > j.Tasks() {
		add("minMember %d outside 0..%d (the job's task count)", j.MinMember, j.Tasks())
	}
	packs := map[string]bool{}
	for _, c := range j.Topology {
		if c.Level == "" {
			add("topology constraint with no level")
		}
		if c.MaxPerDomain < 0 || (c.MaxPerDomain > 0 && !c.Spread) {
			add("maxPerDomain %d on level %q needs spread and must not be negative", c.MaxPerDomain, c.Level)
		}
		if packs[c.Level] {
			add("two constraints on level %q", c.Level)
		}
		packs[c.Level] = true
	}
	return errors.Join(errs...)
}

func (g Group) validate() error {
	if g.Count <= 0 {
		return fmt.Errorf("%q: count %d, want at least 1", g.Name, g.Count)
	}
	d := g.Task
	set := 0
	for _, on := range []bool{d.GPUs != 0, d.MIG != "", d.Shares != 0, d.GPUMemoryMiB != 0, d.GPUMilli != 0} {
		if on {
			set++
		}
	}
	switch {
	case set > 1:
		return fmt.Errorf("%q: asks for more than one of gpus, mig, shares, gpuMemory, gpuMilli", g.Name)
	case d.GPUs < 0 || d.Shares < 0 || d.GPUMemoryMiB < 0 || d.GPUMilli < 0:
		return fmt.Errorf("%q: negative GPU request", g.Name)
	case d.WholeNode && d.GPUs < 1:
		return fmt.Errorf("%q: wholeNode needs gpus of at least 1", g.Name)
	case d.GPUMilli >= 1000:
		return fmt.Errorf("%q: gpuMilli %d is a whole GPU or more; ask for gpus instead", g.Name, d.GPUMilli)
	case d.CPUMilli < 0 || d.MemoryMiB < 0:
		return fmt.Errorf("%q: negative cpu or memory", g.Name)
	}
	return nil
}

// PodDemand is a benchmark pod (placement.Pod) as one task's demand: its
// GPUs whole, or its milli of one GPU shared, and its CPU, memory and
// allowed models.
func PodDemand(p placement.Pod) Demand {
	d := Demand{CPUMilli: p.CPUMilli, MemoryMiB: p.MemoryMiB, Models: p.Models}
	switch {
	case p.IsShare():
		d.GPUMilli = int(p.GPUMilli)
	case p.IsGPU():
		d.GPUs = p.NumGPU
	}
	return d
}

// Single is a job of one task.
func Single(name string, d Demand) *Job {
	return &Job{Name: name, Groups: []Group{{Name: "task", Count: 1, Task: d}}}
}

package gang

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/job"
)

// A job that asks by GPU memory (job.MemoryAsk) is resolved against the
// fleet into one shape: a model and a count of its whole GPUs, as tasks of
// at most one node's GPUs each. Among the models the ask allows whose GPUs
// have at least its minimum per GPU, the shape chosen has
//
//  1. the fewest GPUs;
//  2. then the tightest domain: the deepest topology level (the node
//     innermost) at which one domain holds the shape's tasks;
//  3. then the lowest price (GPUs times the price per GPU-hour), a model
//     whose price is known before one whose price is not;
//  4. then the model's name.
//
// The rule reads the fleet's nodes, not what is free on them: a shape is
// fixed for one State (one generation of the fleet), whatever runs or
// fails, so it is cached per ask and the quota a job is charged is known
// before it is placed.

// memoryChoice is a resolved ask: the shape, or why none fits.
type memoryChoice struct {
	shape job.MemoryShape
	err   error
}

// memoryOption is one model's shape for an ask, with what ranks it.
type memoryOption struct {
	model *gpu.Model
	shape job.MemoryShape
	depth int     // the deepest level one domain holds the shape at; -1 the whole fleet
	price float64 // the shape's price an hour; 0 unknown
}

// Resolve returns j ready to place: j itself when it asks for GPUs, else a
// copy whose one group asks for the chosen shape's GPUs of its model (with
// the CPU and memory of j's group, if any) and whose Shape says what was
// chosen. The error says why no model meets the ask.
func (s *State) Resolve(j *job.Job) (*job.Job, error) {
	if !j.Asks() {
		return j, nil
	}
	if err := j.Validate(); err != nil {
		return nil, err
	}
	key := askKey(j)
	c, ok := s.asks[key]
	if !ok {
		c = s.chooseShape(j)
		if s.asks == nil {
			s.asks = map[string]memoryChoice{}
		}
		s.asks[key] = c
	}
	if c.err != nil {
		return nil, c.err
	}
	return withShape(j, c.shape), nil
}

// askKey is what a choice depends on: the ask and the taints the job
// accepts.
func askKey(j *job.Job) string {
	a := j.ByGPUMemory
	return fmt.Sprint(a.TotalMiB, a.MinPerGPUMiB, a.Models, askTolerations(j))
}

// askTolerations are the taints j's tasks accept.
func askTolerations(j *job.Job) []string {
	if len(j.Groups) == 0 {
		return j.Tolerations
	}
	return j.TolerationsOf(0)
}

// withShape is j asking for shape's GPUs.
func withShape(j *job.Job, shape job.MemoryShape) *job.Job {
	out := *j
	g := job.Group{Name: "gpus"}
	if len(j.Groups) == 1 {
		g = j.Groups[0]
	}
	g.Count = shape.Tasks
	g.Task.GPUs, g.Task.Models = shape.GPUsPerTask, []string{shape.Model}
	out.Groups = []job.Group{g}
	out.Shape = &shape
	return &out
}

// chooseShape ranks every model's shape for j's ask and takes the first.
func (s *State) chooseShape(j *job.Job) memoryChoice {
	opts, refused, err := s.memoryOptions(j)
	if err != nil {
		return memoryChoice{err: fmt.Errorf("by GPU memory: %w", err)}
	}
	if len(opts) == 0 {
		return memoryChoice{err: fmt.Errorf("asks %s: no GPU model of the fleet meets it: %s",
			j.ByGPUMemory, strings.Join(refused, "; "))}
	}
	slices.SortFunc(opts, compareOptions)
	return memoryChoice{shape: opts[0].shape}
}

// compareOptions orders shapes by the rule above.
func compareOptions(a, b memoryOption) int {
	if c := cmp.Compare(a.shape.GPUs(), b.shape.GPUs()); c != 0 {
		return c
	}
	if c := cmp.Compare(b.depth, a.depth); c != 0 {
		return c
	}
	switch {
	case a.price > 0 && b.price > 0 && a.price != b.price:
		return cmp.Compare(a.price, b.price)
	case a.price > 0 && b.price == 0:
		return -1
	case a.price == 0 && b.price > 0:
		return 1
	}
	return strings.Compare(a.model.Name, b.model.Name)
}

// memoryOptions is one option per model that can meet j's ask, and for
// every other model of the fleet why not.
func (s *State) memoryOptions(j *job.Job) ([]memoryOption, []string, error) {
	a := j.ByGPUMemory
	allowed, err := allowedModels(a.Models)
	if err != nil {
		return nil, nil, err
	}
	var opts []memoryOption
	var refused []string
	for _, m := range s.fleetModels() {
		switch {
		case allowed != nil && !allowed[m]:
			refused = append(refused, fmt.Sprintf("%s (%s) is not among the allowed models", m.Name, job.FormatMiB(m.MemoryMiB)))
		case m.MemoryMiB < a.MinPerGPUMiB:
			refused = append(refused, fmt.Sprintf("%s has %s per GPU, under the %s asked", m.Name, job.FormatMiB(m.MemoryMiB), job.FormatMiB(a.MinPerGPUMiB)))
		default:
			o, why := s.memoryOption(j, m)
			if why != "" {
				refused = append(refused, why)
				continue
			}
			opts = append(opts, o)
		}
	}
	return opts, refused, nil
}

// fleetModels lists the GPU models of the fleet's nodes by name.
func (s *State) fleetModels() []*gpu.Model {
	var out []*gpu.Model
	for _, c := range s.classes {
		if c.model != nil && !slices.Contains(out, c.model) {
			out = append(out, c.model)
		}
	}
	slices.SortFunc(out, func(a, b *gpu.Model) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// memoryOption is model m's shape for j's ask: enough GPUs for the
// memory, as few tasks as the largest eligible node allows, each task the
// same size; why is set when the fleet cannot hold it.
func (s *State) memoryOption(j *job.Job, m *gpu.Model) (memoryOption, string) {
	nodes := s.askNodes(j, m)
	perNode := 0
	for _, n := range nodes {
		perNode = max(perNode, s.fleet.Nodes[n].GPUs)
	}
	if perNode == 0 {
		return memoryOption{}, fmt.Sprintf("%s: no node the job may use offers its GPUs whole", m.Name)
	}
	count := int((j.ByGPUMemory.TotalMiB + m.MemoryMiB - 1) / m.MemoryMiB)
	tasks := (count + perNode - 1) / perNode
	shape := job.MemoryShape{Model: m.Name, MemoryMiB: m.MemoryMiB, Tasks: tasks, GPUsPerTask: (count + tasks - 1) / tasks}
	depth, ok := s.tightestDepth(nodes, shape)
	if !ok {
		return memoryOption{}, fmt.Sprintf("the fleet's %s nodes cannot hold %s", m.Name, shape)
	}
	return memoryOption{model: m, shape: shape, depth: depth, price: s.askPrice(nodes, shape)}, ""
}

// askNodes are the nodes j may use with whole GPUs of model m: not static
// MIG, not spares, with taints j tolerates.
func (s *State) askNodes(j *job.Job, m *gpu.Model) []int {
	tol := askTolerations(j)
	var out []int
	for n := range s.nodes {
		c := s.classes[s.nodes[n].class]
		if c.model == m && c.mig != fleet.MIGStatic && !s.fleet.Nodes[n].Spare && tolerates(tol, c.taints) {
			out = append(out, n)
		}
	}
	return out
}

// tightestDepth is the deepest level at which one domain's nodes hold
// shape's tasks (the node level is s.tree.levels, the whole fleet -1).
func (s *State) tightestDepth(nodes []int, shape job.MemoryShape) (int, bool) {
	for d := s.tree.levels; d >= 0; d-- {
		held := map[int]int{} // domain at depth d (a node at the node level) -> tasks
		for _, n := range nodes {
			v := n
			if d < s.tree.levels {
				v = s.tree.path[n][d]
			}
			held[v] += s.fleet.Nodes[n].GPUs / shape.GPUsPerTask
			if held[v] >= shape.Tasks {
				return d, true
			}
		}
	}
	total := 0
	for _, n := range nodes {
		total += s.fleet.Nodes[n].GPUs / shape.GPUsPerTask
	}
	return -1, total >= shape.Tasks
}

// askPrice is shape's price an hour at the lowest known price per GPU-hour
// of nodes; 0 when none is known.
func (s *State) askPrice(nodes []int, shape job.MemoryShape) float64 {
	best := 0.0
	for _, n := range nodes {
		if p := s.fleet.Nodes[n].PricePerGPUHour; p > 0 && (best == 0 || p < best) {
			best = p
		}
	}
	return best * float64(shape.GPUs())
}

// withShapeReason puts first among u's reasons the shape chosen for a job
// that asked by GPU memory, so that the model and count it waits for are
// told.
func withShapeReason(u *Unfit, j *job.Job) *Unfit {
	if u == nil || j.Shape == nil || j.ByGPUMemory == nil {
		return u
	}
	u.Chosen = fmt.Sprintf("asks %s: the scheduler chose %s", j.ByGPUMemory, j.Shape)
	return u
}

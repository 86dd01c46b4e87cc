package twin

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/queue"
	"github.com/corral-sched/corral/internal/sched"
)

// GPUFlavor is the one flavor the twin counts quota in, as the server does.
var GPUFlavor = queue.Flavor{Model: "gpu", Capacity: "local"}

// Core runs a script on sched.Cycle directly, with the settings the faces
// use (preemption on, fair share across tenants): the reference the faces
// are held to. A preempted job goes back to waiting at once, as if its
// processes stopped the moment they were told.
type Core struct {
	state     *gang.State
	fleet     Fleet
	gpus      int // in the whole fleet
	model     *gpu.Model
	book      *queue.Book
	specs     []queue.Spec
	now       time.Duration // logical time: one minute a cycle
	arrival   int64
	pending   []sched.Unit
	running   map[string]sched.Running
	submitted map[string]sched.Unit // as submitted, to requeue
	mem       *sched.Memory         // claims, preemption counts, back-offs
	started   []string
	moved     []string
	preempted []string
	// elastic are the running elastic jobs' parts; sizes follows every
	// running job's tasks for Resized.
	elastic map[string]*elasticRun
	sizes   Sizes
	// tweak, when set, changes the cycle's settings, requeueStruck stops
	// every job on a failed node, and fixedSize never resizes an elastic
	// job: a face that decides otherwise, for the test that the
	// transcripts catch it.
	tweak         func(*sched.Config)
	requeueStruck bool
	fixedSize     bool // elastic jobs are never resized
}

// NewCore is an empty core face.
func NewCore() *Core {
	return &Core{running: map[string]sched.Running{}, submitted: map[string]sched.Unit{}, mem: sched.NewVolatileMemory(),
		elastic: map[string]*elasticRun{}}
}

func (c *Core) Fleet(tf Fleet) error {
	f, model, err := BuildFleet(tf)
	if err != nil {
		return err
	}
	st, err := gang.New(f)
	c.state, c.fleet, c.gpus, c.model = st, tf, tf.GPUs*len(tf.NodeNames()), model
	return err
}

// BuildFleet is a script's machines as nodes named by Fleet.NodeNames,
// in racks when the fleet has them, with CPU and memory to spare.
func BuildFleet(tf Fleet) (*fleet.Fleet, *gpu.Model, error) {
	model, err := gpu.Lookup(cmp.Or(tf.Model, DefaultModel))
	if err != nil {
		return nil, nil, err
	}
	names := tf.NodeNames()
	syn := fleet.Synthetic{Nodes: len(names), GPUsPerNode: tf.GPUs, GPUModel: model.Name, CPUMilli: 1 << 20, MemoryMiB: 1 << 30}
	if tf.MIG {
		syn.MIG = fleet.MIGDynamic
	}
	f, err := syn.Build()
	if err != nil {
		return nil, nil, err
	}
	f.Levels = nil
	if tf.RackSize > 0 {
		f.Levels = []string{"rack"}
	}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		n.Name, n.Domains = names[i], nil
		if tf.RackSize > 0 {
			n.Domains = []string{tf.Rack(i)}
		}
		n.Spare = tf.Spare(i)
		if !tf.MIG && tf.Slices > 1 {
			n.TimeSlices = tf.Slices
		}
	}
	return f, model, f.Validate()
}

func (c *Core) Tenant(t Tenant) error {
	c.specs = append(c.specs, QueueSpec(t, c.gpus, GPUFlavor))
	book, err := queue.NewBook(c.specs, 0)
	c.book = book
	return err
}

// QueueSpec is a tenant's queue as the server has it, counting GPUs in
// flavor: no quota is no limit, with fair share measured against the
// machine; a quota is the nominal quota, lent to the tenant's cohort
// while unused.
func QueueSpec(t Tenant, gpus int, flavor queue.Flavor) queue.Spec {
	spec := queue.Spec{Name: t.Name, Nominal: queue.Amounts{flavor: 1 << 40}, ShareGPUs: float64(gpus), Order: queue.PriorityFIFO}
	if t.Quota > 0 {
		spec.Nominal[flavor], spec.ShareGPUs, spec.Cohort = int64(t.Quota)*queue.Milli, 0, t.Cohort
	}
	return spec
}

func (c *Core) Submit(j Job) error {
	c.arrival++
	u := sched.Unit{Job: CoreJob(j), Queue: j.Tenant, Need: sched.Charger{GPU: GPUFlavor}.Need(c.state, CoreJob(j)), Arrival: c.arrival}
	c.submitted[j.Name] = u
	c.pending = append(c.pending, u)
	return nil
}

func (c *Core) Finish(name string) error {
	r, ok := c.running[name]
	if !ok {
		return fmt.Errorf("%s is not running", name)
	}
	return c.end(r)
}

// end takes a running job off the fleet and its quota.
func (c *Core) end(r sched.Running) error {
	delete(c.running, r.Name)
	delete(c.elastic, r.Name)
	for _, part := range partsOf(r) {
		if err := c.state.Release(part); err != nil {
			return err
		}
	}
	return c.book.Release(r.Queue, r.Need)
}

// Down takes a node away (every node for ""): a gang the core's rule
// moves (sched.MovesOff) goes on with its tasks there on a spare or free
// node next to the rest; every other job on it waits again, in its old
// place.
func (c *Core) Down(node string) error {
	stopped := map[string][]string{} // job -> the failed nodes it is on
	for _, n := range c.nodes(node) {
		if err := c.state.SetHealth(n, fleet.Unhealthy); err != nil {
			return err
		}
		for _, part := range c.state.Affected(n) {
			name := c.ownerOf(part)
			stopped[name] = append(stopped[name], n)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(stopped)) {
		if c.moveOff(name, stopped[name]) {
			continue
		}
		if err := c.end(c.running[name]); err != nil {
			return err
		}
		c.pending = append(c.pending, c.submitted[name])
	}
	return nil
}

// moveOff moves a job's tasks off the failed nodes when the rule says so
// and nodes take them, one failed node after another as the faces learn
// of them; false when the job is to stop whole.
func (c *Core) moveOff(name string, failed []string) bool {
	if c.elastic[name] != nil {
		return false // placed as several parts: it stops whole
	}
	if move, _ := sched.MovesOff(sched.Struck{Tasks: len(c.state.Job(name).Tasks)}); !move || c.requeueStruck {
		return false
	}
	for _, n := range failed {
		if _, err := c.state.Replace(name, n); err != nil {
			return false
		}
	}
	c.moved = append(c.moved, name)
	return true
}

// Moved returns the jobs moved off failed nodes since the last call.
func (c *Core) Moved() []string {
	m := c.moved
	c.moved = nil
	return m
}

// Up brings a node back (every node for "").
func (c *Core) Up(node string) error {
	for _, n := range c.nodes(node) {
		if err := c.state.SetHealth(n, fleet.Healthy); err != nil {
			return err
		}
	}
	return nil
}

// Restart does nothing: the core keeps no process of its own.
func (c *Core) Restart() error { return nil }

// nodes is the nodes a down or up step names: one, or all for "".
func (c *Core) nodes(node string) []string {
	if node == "" {
		return c.fleet.NodeNames()
	}
	return []string{node}
}

func (c *Core) Settle() (started, preempted, waiting []string, err error) {
	for range 100 {
		d := sched.Cycle(c.snapshot())
		if err := c.apply(d); err != nil {
			return nil, nil, nil, err
		}
		if len(d.Starts) == 0 && len(d.Preempts) == 0 && len(d.Grows) == 0 && len(d.GiveBacks) == 0 {
			break
		}
	}
	for _, u := range c.pending {
		waiting = append(waiting, u.Job.Name)
	}
	started, preempted = c.started, c.preempted
	c.started, c.preempted = nil, nil
	return started, preempted, waiting, nil
}

func (c *Core) snapshot() *sched.Snapshot {
	c.now += time.Minute
	_ = c.book.Advance(c.now)
	snap := &sched.Snapshot{Now: time.Unix(0, 0).Add(c.now), State: c.state, Book: c.book,
		Config: sched.Config{Preemption: true, FairShare: true}}
	if c.tweak != nil {
		c.tweak(&snap.Config)
	}
	for _, u := range c.pending {
		m := c.mem.Of(u.Job.Name)
		u.Claimed, u.NoBorrowUntil = m.Claimed, m.NoBorrowUntil
		snap.Pending = append(snap.Pending, u)
	}
	for _, name := range slices.Sorted(maps.Keys(c.running)) {
		snap.Running = append(snap.Running, c.running[name])
	}
	return snap
}

// apply records the cycle's starts as running and ends its victims, which
// wait again.
func (c *Core) apply(d sched.Decisions) error {
	for _, s := range d.Starts {
		j := s.Unit.Job
		c.running[j.Name] = sched.Running{Name: j.Name, Queue: s.Unit.Queue, Need: s.Unit.Need, Priority: j.Priority,
			Preemptible: true, Started: time.Unix(0, 0).Add(c.now), GPUs: float64(s.Unit.Need[GPUFlavor]) / queue.Milli,
			Preemptions: c.mem.Of(j.Name).Preemptions}
		c.pending = slices.DeleteFunc(c.pending, func(u sched.Unit) bool { return u.Job.Name == j.Name })
		c.started = append(c.started, j.Name)
		c.sizes.Started(j.Name)
		c.mem.Started(j.Name)
		if j.Elastic {
			c.elastic[j.Name] = &elasticRun{job: j, parts: []string{j.Name}, missing: j.Tasks() - len(s.Placement.Tasks)}
			c.resized(j.Name)
		}
	}
	for _, gb := range d.GiveBacks {
		e := c.elastic[gb.Unit]
		e.parts, e.grown = slices.DeleteFunc(e.parts, is(gb.Part)), slices.DeleteFunc(e.grown, is(gb.Part))
		e.missing += len(gb.Placement.Tasks)
		c.resized(gb.Unit)
	}
	for _, g := range d.Grows {
		e := c.elastic[g.Unit]
		e.parts, e.grown = append(e.parts, g.Placement.Job), append(e.grown, g.Placement.Job)
		e.missing -= len(g.Placement.Tasks)
		e.next++
		c.resized(g.Unit)
	}
	for _, p := range d.Preempts {
		r := c.running[p.Victim]
		if err := c.end(r); err != nil {
			return err
		}
		c.preempted = append(c.preempted, p.Victim)
		c.mem.Preempted(p.For, map[string]time.Time{p.Victim: p.NoBorrowUntil})
		c.pending = append(c.pending, c.submitted[p.Victim]) // requeued in its place
	}
	return nil
}

// CoreJob is a twin job as the core takes it.
func CoreJob(j Job) *job.Job {
	cj := &job.Job{Name: j.Name, Tenant: j.Tenant, Priority: j.Priority,
		Groups: []job.Group{{Name: "task", Count: max(j.Tasks, 1), Task: job.Demand{GPUs: j.GPUs, GPUMilli: j.Share, MIG: j.MIG}}}}
	if j.Pack != "" {
		cj.Topology = []job.Constraint{{Level: j.Pack, Required: true}}
	}
	if j.Elastic() {
		cj.MinMember, cj.Elastic = j.MinTasks, true
	}
	return cj
}

// elasticRun is a running elastic job: its placed parts (its name first,
// then the parts it grew by), those it grew by, the tasks it runs
// without, and the number of the next part it may grow by.
type elasticRun struct {
	job     *job.Job
	parts   []string
	grown   []string
	missing int
	next    int
}

// resized updates a running elastic job's entry after its parts changed:
// its parts, what it grew by, and what it may still grow by.
func (c *Core) resized(name string) {
	e, r := c.elastic[name], c.running[name]
	r.Parts, r.Grown, r.Grow = slices.Clone(e.parts), slices.Clone(e.grown), nil
	if c.fixedSize {
		r.Grown = nil
	}
	if e.missing > 0 && !c.fixedSize {
		g := *e.job
		g.Name = fmt.Sprintf("%s+%d", name, e.next+1)
		g.Groups = []job.Group{{Name: "task", Count: e.missing, Task: e.job.Groups[0].Task}}
		g.MinMember = 1
		r.Grow = &g
	}
	c.running[name] = r
}

// ownerOf is the job a placed part belongs to.
func (c *Core) ownerOf(part string) string {
	for name, e := range c.elastic {
		if slices.Contains(e.parts, part) {
			return name
		}
	}
	return part
}

// Resized returns the jobs that run with more tasks than at the last
// call, and those with fewer, among those that ran then and were not
// started again since.
func (c *Core) Resized() (grew, shrank []string) {
	now := map[string]int{}
	for name, r := range c.running {
		for _, part := range partsOf(r) {
			now[name] += len(c.state.Job(part).Tasks)
		}
	}
	return c.sizes.Changes(now)
}

func is(name string) func(string) bool { return func(s string) bool { return s == name } }

// partsOf is the placed jobs of a running job: its parts, or its name.
func partsOf(r sched.Running) []string {
	if len(r.Parts) > 0 {
		return r.Parts
	}
	return []string{r.Name}
}

var (
	_ Face    = (*Core)(nil)
	_ Mover   = (*Core)(nil)
	_ Resizer = (*Core)(nil)
)

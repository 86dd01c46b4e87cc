package sim

import (
	"sort"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

// slurmPolicy models Slurm configured as its documentation describes for
// GPU clusters. It is a model of that configuration, not Slurm:
//
//   - SelectType=select/cons_tres with GresTypes=gpu (cons_tres.html,
//     gres.html): a task gets the GPUs, cores and memory it asks for, not a
//     node; MIG instances are typed GRES (gres.html "MIG Support") and
//     fractions of a GPU are shard GRES (gres.html "Sharding"), so every
//     demand is placed as asked. The fleet's MIG layouts may change, which
//     Slurm does not do (MIG devices exist before slurmd starts): this
//     flatters the model, not corral.
//   - TopologyPlugin=topology/tree or topology/block (topology.html): a
//     job's nodes are chosen under the fewest switches, and a job that
//     must stay in one block does (--switches, --segment): the job's own
//     topology constraints are kept. A job runs all its tasks for its
//     whole run: an elastic service gets the replicas it asks for.
//   - PriorityType=priority/multifactor (priority_multifactor.html): fair
//     share by Fair Tree (fair_tree.html, the default) over usage decayed
//     with PriorityDecayHalfLife, age, job size and QOS (the job's
//     priority); see slurm_priority.go.
//   - SchedulerType=sched/backfill (sched_config.html): jobs in priority
//     order, the first that does not fit holds a reservation, and later
//     jobs start only if they do not delay it (--backfill conservative
//     reserves for more, as bf_max_job_test does). bf_window is set at
//     least as long as the longest time limit, as slurm.conf advises, so
//     no reservation lies beyond it.
//   - PreemptType=preempt/qos, PreemptMode=REQUEUE (preempt.html): a
//     waiting job may requeue running preemptible jobs of a lower QOS, who
//     get --preempt-grace (GraceTime) to checkpoint.
type slurmPolicy struct{ prio *slurmPriority }

func newSlurmPolicy() Policy { return slurmPolicy{prio: newSlurmPriority()} }

func (slurmPolicy) Name() string { return "slurm-like" }
func (slurmPolicy) Describe() string {
	return "model of Slurm for GPUs: cons_tres per-GPU GRES (MIG typed, shards), multifactor priority (Fair Tree, age, size, QOS), backfill, QOS preemption"
}
func (slurmPolicy) StateOptions() gang.Options { return gang.Options{} }

func (slurmPolicy) Docs() []string {
	return []string{
		"https://slurm.schedmd.com/cons_tres.html (SelectType=select/cons_tres)",
		"https://slurm.schedmd.com/gres.html (GPU GRES, MIG Support, Sharding) and gres.conf.html",
		"https://slurm.schedmd.com/topology.html (topology/tree, topology/block)",
		"https://slurm.schedmd.com/priority_multifactor.html and fair_tree.html (PriorityDecayHalfLife=7-0, PriorityMaxAge=7-0, weights FairShare 10000, Age/JobSize/QOS 1000)",
		"https://slurm.schedmd.com/sched_config.html and slurm.conf.html#OPT_bf_window (sched/backfill, bf_window >= longest time limit)",
		"https://slurm.schedmd.com/preempt.html (PreemptType=preempt/qos, PreemptMode=REQUEUE, GraceTime)",
	}
}

func (p slurmPolicy) Cycle(s *Sim) {
	order := p.prio.order(s)
	s.easyCycle(order, fixedSize)
	p.prio.preempt(s)
	p.prio.observe(s)
}

// fixedSize is a job as Slurm runs it: all its tasks from start to end.
// A running Slurm job does not grow, so an elastic service is submitted
// for the replicas it needs rather than started smaller for good.
func fixedSize(p *pendingJob) *job.Job {
	if p.shaped == nil {
		p.shaped = p.a.Job
		if j := p.a.Job; j.MinMember != 0 || j.Elastic {
			c := *j
			c.MinMember, c.Elastic = 0, false
			p.shaped = &c
		}
	}
	return p.shaped
}

// slurmPreemptTries is how many waiting jobs, highest priority first, may
// look for lower-QOS victims in one cycle, as Slurm's main scheduler tests
// a bounded queue depth.
const slurmPreemptTries = 8

// preempt lets the highest-priority waiting jobs requeue running
// preemptible jobs of a lower QOS when that makes room for them.
func (sp *slurmPriority) preempt(s *Sim) {
	lowest, any := s.lowestPreemptible()
	if !any {
		return
	}
	tries := 0
	for _, p := range sp.order(s) {
		if tries == slurmPreemptTries {
			return
		}
		if p.a.Job.Priority <= lowest || sp.noPreempt.same(p.a.Job.Name, s.version) {
			continue
		}
		tries++
		sp.noPreempt.note(p.a.Job.Name, s.version)
		if s.preemptPlaced(p, fixedSize(p), lowerThan(p), "requeued by higher QOS") {
			s.start(p, []string{p.a.Job.Name})
		}
	}
}

// lowestPreemptible is the lowest priority of a running preemptible job,
// and whether there is one.
func (s *Sim) lowestPreemptible() (int, bool) {
	lowest, any := 0, false
	for _, r := range s.running {
		if r.a.Job.Preemptible && (!any || r.a.Job.Priority < lowest) {
			lowest, any = r.a.Job.Priority, true
		}
	}
	return lowest, any
}

// slurmExclusivePolicy is the worst case kept for comparison: every task
// that uses a GPU gets a whole node (OverSubscribe=EXCLUSIVE, or
// select/linear), jobs go by priority then arrival, EASY backfill. Slurm
// documents per-GPU allocation (slurm-like) for GPU clusters.
type slurmExclusivePolicy struct{}

func (slurmExclusivePolicy) Name() string { return "slurm-exclusive" }
func (slurmExclusivePolicy) Describe() string {
	return "worst case: Slurm with whole nodes per GPU task (OverSubscribe=EXCLUSIVE), priority then FIFO, EASY backfill"
}
func (slurmExclusivePolicy) StateOptions() gang.Options { return gang.Options{} }
func (slurmExclusivePolicy) Docs() []string {
	return []string{"https://slurm.schedmd.com/slurm.conf.html#OPT_OverSubscribe (EXCLUSIVE: whole nodes)"}
}

func (slurmExclusivePolicy) Cycle(s *Sim) {
	order := append([]*pendingJob(nil), s.pending...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].a.Job.Priority > order[j].a.Job.Priority })
	s.easyCycle(order, func(p *pendingJob) *job.Job {
		if p.shaped == nil {
			p.shaped = wholeNodes(p.a.Job)
		}
		return p.shaped
	})
}

// wholeNodes turns every GPU task of j into a whole-node task.
func wholeNodes(j *job.Job) *job.Job {
	c := *j
	c.Groups = make([]job.Group, len(j.Groups))
	for i, g := range j.Groups {
		d := g.Task
		if d.Kind() != job.CPUOnly {
			d = job.Demand{GPUs: max(d.GPUs, 1), WholeNode: true, CPUMilli: d.CPUMilli, MemoryMiB: d.MemoryMiB, Models: d.Models}
		}
		c.Groups[i] = job.Group{Name: g.Name, Count: g.Count, Task: d}
	}
	return &c
}

package sim

import (
	"container/heap"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/corral-sched/corral/internal/faultrec"
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/queue"
	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/workload"
)

// Sim is one replay of a workload under one policy.
type Sim struct {
	now           time.Duration
	fleet         *fleet.Fleet
	state         *gang.State
	arr           []workload.Arrival
	pending       []*pendingJob // in arrival order
	running       map[string]*runningJob
	events        eventQueue
	seq           int
	acct          accounting
	pulls         *pulls // images nodes hold and what pulls cost; nil without Options.ImagePull
	faults        []workload.Fault
	owner         map[string]string // placement name -> job name, for running jobs
	story         []string          // the story of opt.Explain's job
	waitNoted     bool              // the policy said why opt.Explain's job waits, this cycle
	runs          int               // counts runs started, to tell completions apart
	records       []JobRecord
	byName        map[string]int              // job name -> index into records
	handledFaults []faultrec.Record           // faults handled, in order
	book          *queue.Book                 // tenants' quotas and fair share
	ceiling       *sched.Ceiling              // the most each tenant could ever get
	refused       []Refusal                   // jobs refused at arrival: over quota forever, or no model meets their ask
	unmet         map[string]string           // job -> why no GPU model meets its ask by GPU memory
	version       int                         // counts finishes and starts that may move a reservation
	byEnd         []endEntry                  // running jobs by estimated end
	freed         bool                        // a job ended since the last cycle
	resvs         map[string]reservationCache // by head
	// entitled is each tenant's share of the workload's GPU-hours: its
	// nominal quota as a share of the fleet.
	entitled map[string]float64
	series   series // the fleet hour by hour
	opt      Options
	// preempted holds the times of recent stops to give quota back, oldest
	// first, for the hourly bound.
	preempted hourWindow
	spares    []string                   // hot spare nodes
	gone      map[string]*gang.Placement // placements the core removed (evicted from a spare), until the sim lets go of them
	scale     autoscaling
	growable  map[string]bool // running elastic jobs below their full size
	growTried int             // version (+1) of volcano-like's last attempt to grow them
	// Defragmentation: the times of recent moves, and the GPU-hours
	// gained net of work lost.
	moved          hourWindow
	defragGainGPUH float64
	// units is the core's memory of jobs between cycles: how often each
	// was stopped, until when it may not borrow, the room claimed for it,
	// and the reservations the last cycle ended with.
	// budgetWake: the latest wake-up scheduled for the preemption bound.
	units         *sched.Memory
	budgetWake    time.Duration
	budgets       *budgets // tenants' GPU-hour budgets (Options.Budgets)
	healthChanges int
	coreRun       []sched.Running // the running jobs as the cycle reads them, in byEnd's order
}

// pendingJob is a job waiting to start, with the placements it already
// holds when its policy places tasks one at a time.
type pendingJob struct {
	a      *workload.Arrival
	held   []string   // names of task placements held (kube-default)
	pods   []*job.Job // the job split into pods (kube-default)
	shaped *job.Job   // the job as its policy asks for it (slurm-like)
	// admitted: its quota is taken (kueue-like admits before placing)
	admitted bool
	fresh    bool          // arrived since the last cycle
	done     time.Duration // work saved by checkpoints before an interruption
	wakeSet  bool          // a wake-up at the end of its patience is scheduled
	// startDelay: it starts this long after it is placed, while the jobs
	// it preempted checkpoint on the capacity held for it.
	startDelay time.Duration
	// requeued is when it was last stopped and queued again; 0 if never.
	requeued time.Duration
	// awaitingNodes counts autoscaled nodes joining for it; scaleTried is
	// the version (+1) at which it was last checked for new nodes.
	awaitingNodes int
	scaleTried    int
}

// runningJob is a job that started.
type runningJob struct {
	a        *workload.Arrival
	parts    []string // placement names to release when it ends
	gpus     float64
	start    time.Duration
	admitted bool          // holds quota
	done     time.Duration // work saved before this run
	run      int           // which run this is, for its completion event
	pending  *pendingJob   // what it was waiting as, to requeue it
	// An elastic job changes size while it runs: gpuH is the GPU-hours it
	// ran at earlier sizes, seg when its current size began; missing
	// counts the tasks it runs without, grown the placements added.
	gpuH    float64
	seg     time.Duration
	missing int
	grown   []string
}

// Run replays w on a copy of f under p and returns what happened.
func Run(f *fleet.Fleet, w workload.Workload, p Policy) (*Result, error) {
	return replay(f, w, p, Options{})
}

func replay(f *fleet.Fleet, w workload.Workload, p Policy, opt Options) (*Result, error) {
	s, err := newSim(f, w, p, opt)
	if err != nil {
		return nil, fmt.Errorf("simulate %s: %w", p.Name(), err)
	}
	for i := range w.Arrivals {
		s.schedule(event{at: w.Arrivals[i].At, arrival: i})
	}
	s.faults = w.Faults
	for i := range w.Faults {
		s.schedule(event{at: w.Faults[i].At, arrival: -1, fault: i + 1})
	}
	for steps := 0; s.events.Len() > 0; steps++ {
		s.step(p)
		if opt.Progress != nil && steps%1024 == 0 {
			opt.Progress(len(s.records)+len(s.refused), len(w.Arrivals))
		}
	}
	if opt.Progress != nil {
		opt.Progress(len(w.Arrivals), len(w.Arrivals))
	}
	s.series.sampleBefore(max(s.now, w.Horizon)+1, s.state)
	if opt.Observe != nil {
		opt.Observe(s.now, s.state)
	}
	res := s.result(p.Name(), w.Horizon)
	res.Hours = s.series.hours
	res.Explain = s.story
	return res, nil
}

// newSim sets up a replay of w on a copy of f under p: the fleet, its
// placements, the tenants' quota book, and nothing yet scheduled.
func newSim(f *fleet.Fleet, w workload.Workload, p Policy, opt Options) (*Sim, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	spend, err := newBudgets(opt.Budgets)
	if err != nil {
		return nil, err
	}
	fc := copyFleet(f)
	state, err := gang.NewWithOptions(fc, p.StateOptions())
	if err != nil {
		return nil, err
	}
	var unmet map[string]string
	w.Arrivals, unmet = resolveAsks(state, w.Arrivals)
	book, ceiling, entitled, err := newBook(w, fc.GPUs(), opt.Quotas)
	if err != nil {
		return nil, err
	}
	s := &Sim{fleet: fc, state: state, arr: w.Arrivals, running: map[string]*runningJob{}, byName: map[string]int{},
		book: book, ceiling: ceiling, entitled: entitled, owner: map[string]string{},
		opt: opt, gone: map[string]*gang.Placement{},
		resvs:    map[string]reservationCache{},
		growable: map[string]bool{},
		budgets:  spend, units: sched.NewVolatileMemory(),
		unmet: unmet}
	for _, n := range fc.Nodes {
		if n.Spare {
			s.spares = append(s.spares, n.Name)
		}
	}
	s.acct.capacity, s.acct.horizon = float64(fc.GPUs()), w.Horizon
	s.series = newSeries(fc)
	s.setUpImages()
	if err := s.setUpAutoscaling(); err != nil {
		return nil, err
	}
	return s, nil
}

// step handles every event at the next moment, then lets the policy act.
func (s *Sim) step(p Policy) {
	at := s.events[0].at
	s.series.sampleBefore(at, s.state)
	if s.opt.Observe != nil {
		s.opt.Observe(at, s.state)
	}
	s.acct.advance(at)
	s.advanceBought(at)
	s.now = at
	if err := s.book.Advance(at); err != nil {
		panic(fmt.Sprintf("sim: %v", err))
	}
	for s.events.Len() > 0 && s.events[0].at == at {
		e := heap.Pop(&s.events).(event)
		switch {
		case e.arrival >= 0:
			s.arrive(&s.arr[e.arrival])
		case e.fault > 0:
			s.fault(s.faults[e.fault-1])
		case e.back != "":
			if !s.isAbsent(e.back) {
				s.setHealth(e.back, fleet.Healthy)
			}
		case e.wake != "":
			s.wakeUp(e.wake)
		case e.provisioned != "":
			s.joined(e.provisioned, e.forJob)
		case e.idle != "":
			s.idleCheck(e.idle)
		default:
			if r := s.running[e.job]; r != nil && r.run == e.run {
				s.finish(e.job)
			}
		}
	}
	s.waitNoted = false
	p.Cycle(s)
	s.explainStillWaiting()
	s.scaleUp()
	if checkInvariants {
		s.invariants()
	}
}

func (s *Sim) arrive(a *workload.Arrival) {
	if why := s.unmet[a.Job.Name]; why != "" {
		s.refuse(a, RefusedNoModel, why) // as corral submit refuses it
		return
	}
	if why := s.neverAdmitted(a); why != "" {
		s.refuse(a, RefusedOverQuota, why) // as at submit: no policy ever sees it
		return
	}
	s.byName[a.Job.Name] = len(s.records)
	s.records = append(s.records, JobRecord{Name: a.Job.Name, Tenant: a.Job.Tenant, Class: a.Class,
		Arrive: a.At, GPUs: demandGPUs(a), Tasks: a.Job.Tasks(), WorkGPUH: workGPUH(a)})
	s.pending = append(s.pending, &pendingJob{a: a, fresh: true})
	s.series.demanded += demandGPUs(a)
	s.note(a.Job.Name, "arrives from tenant %s: %d tasks, %.2f GPUs, runs %v, estimated %v",
		tenantOf(a), a.Job.Tasks(), demandGPUs(a), a.Duration, a.Job.Runtime)
}

// start marks a pending job running on the given placements.
func (s *Sim) start(p *pendingJob, parts []string) {
	gpus := s.usedGPUs(p, parts) // what the job uses, whatever it holds
	s.runs++
	pull := s.pull(p.a.Job.Images, parts, gpus)
	begin := s.now + max(p.startDelay, pull) // pulled while the jobs it preempted checkpoint
	p.startDelay = 0
	r := &runningJob{a: p.a, parts: parts, gpus: gpus, start: begin, admitted: p.admitted, done: p.done, run: s.runs, pending: p}
	for _, part := range parts {
		s.owner[part] = p.a.Job.Name
	}
	s.running[p.a.Job.Name] = r
	if p.a.Job.Elastic && len(parts) == 1 && len(p.a.Job.Groups) == 1 {
		if r.missing = p.a.Job.Tasks() - len(s.state.Job(parts[0]).Tasks); r.missing > 0 {
			s.growable[p.a.Job.Name] = true
		}
	}
	s.trackEnd(r, true)
	s.version++
	s.acct.used += gpus
	s.series.use(s.placements(parts), gpus, 1)
	s.schedule(event{at: begin + p.a.Duration - p.done, arrival: -1, job: p.a.Job.Name, run: r.run})
	switch {
	case pull > 0:
		s.note(p.a.Job.Name, "placed: %d placements, %.2f GPUs, held for it while its nodes pull its images (%.1f min); starts at %.2fh", len(parts), gpus, pull.Minutes(), begin.Hours())
	case begin > s.now:
		s.note(p.a.Job.Name, "placed: %d placements, %.2f GPUs, held for it while the jobs it preempted checkpoint; starts at %.2fh", len(parts), gpus, begin.Hours())
	default:
		s.note(p.a.Job.Name, "starts: %d placements, %.2f GPUs used", len(parts), gpus)
	}
	rec := &s.records[s.byName[p.a.Job.Name]]
	if !rec.Started {
		rec.Started, rec.Start, rec.UsedGPUs = true, begin, gpus
	}
	s.removePending(p)
}

func (s *Sim) finish(name string) {
	r := s.stop(name)
	s.units.Forget(name)
	s.note(name, "finishes")
	rec := &s.records[s.byName[name]]
	rec.Finished, rec.End = true, s.now
	s.series.demanded -= demandGPUs(r.a)
	rec.GPUHours += s.ran(r)
}

// stop ends a running job's run: its placements and quota are freed.
func (s *Sim) stop(name string) *runningJob {
	r := s.running[name]
	s.chargeBudget(r, s.ran(r))
	s.series.use(s.placements(r.parts), r.gpus, -1)
	for _, part := range r.parts {
		s.release(part)
		delete(s.owner, part)
	}
	s.acct.used -= r.gpus
	if r.admitted {
		if err := s.book.Release(tenantOf(r.a), s.need(r.a)); err != nil {
			panic(fmt.Sprintf("sim: %v", err))
		}
	}
	s.trackEnd(r, false)
	delete(s.running, name)
	delete(s.growable, name)
	s.version++
	s.freed = true
	return r
}

// tryPlace places a job (or one task of it) whole and counts its GPUs as
// allocated.
func (s *Sim) tryPlace(j *job.Job) (*gang.Placement, bool) {
	p, ok := s.state.TryPlace(j)
	if ok {
		s.acct.allocated += placedGPUs(p)
		s.series.hold(p, 1)
		s.placedOn(p)
	}
	return p, ok
}

// release frees a placement and its allocation.
func (s *Sim) release(name string) {
	if _, ok := s.gone[name]; ok {
		delete(s.gone, name) // already removed and accounted for
		return
	}
	p := s.state.Job(name)
	s.acct.allocated -= placedGPUs(p)
	s.series.hold(p, -1)
	if err := s.state.Release(name); err != nil {
		panic(fmt.Sprintf("sim: %v", err))
	}
	s.releasedFrom(p)
}

// failedAt remembers, per job, the version of the state (+1) at which an
// attempt for it last failed: while the version stays, trying again would
// fail the same way.
type failedAt map[string]int

func (f failedAt) same(name string, version int) bool { return f[name] == version+1 }
func (f failedAt) note(name string, version int)      { f[name] = version + 1 }

// placements looks up placements by name.
func (s *Sim) placements(names []string) []*gang.Placement {
	out := make([]*gang.Placement, len(names))
	for i, n := range names {
		if p := s.gone[n]; p != nil {
			out[i] = p
			continue
		}
		out[i] = s.state.Job(n)
	}
	return out
}

func (s *Sim) removePending(p *pendingJob) {
	for i, q := range s.pending {
		if q == p {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return
		}
	}
}

// runningByEstimatedEnd lists running jobs by when they are expected to
// end (start + estimate, never for jobs without one), then by name, with
// those ends (a job past its estimate is expected to end now). The order
// is kept up to date as jobs start and finish.
func (s *Sim) runningByEstimatedEnd() ([]string, []time.Duration) {
	names := make([]string, len(s.byEnd))
	ends := make([]time.Duration, len(s.byEnd))
	for i, e := range s.byEnd {
		names[i], ends[i] = e.name, max(e.end, s.now)
	}
	return names, ends
}

// endEntry is a running job in estimated-end order.
type endEntry struct {
	end  time.Duration
	name string
}

func (e endEntry) before(o endEntry) bool {
	if e.end != o.end {
		return e.end < o.end
	}
	return e.name < o.name
}

func (s *Sim) trackEnd(r *runningJob, add bool) {
	e := endEntry{end: forever, name: r.a.Job.Name}
	if r.a.Job.Runtime > 0 {
		e.end = r.start + r.a.Job.Runtime
	}
	i := sort.Search(len(s.byEnd), func(i int) bool { return !s.byEnd[i].before(e) })
	if add {
		s.byEnd = slices.Insert(s.byEnd, i, e)
		s.coreRun = slices.Insert(s.coreRun, i, s.coreRunning(e.name))
		return
	}
	s.byEnd = slices.Delete(s.byEnd, i, i+1)
	s.coreRun = slices.Delete(s.coreRun, i, i+1)
}

// coreEntry is r's entry in s.coreRun.
func (s *Sim) coreEntry(r *runningJob) *sched.Running {
	e := endEntry{end: forever, name: r.a.Job.Name}
	if r.a.Job.Runtime > 0 {
		e.end = r.start + r.a.Job.Runtime
	}
	return &s.coreRun[sort.Search(len(s.byEnd), func(i int) bool { return !s.byEnd[i].before(e) })]
}

const forever = time.Duration(1<<63 - 1)

func copyFleet(f *fleet.Fleet) *fleet.Fleet {
	c := *f
	c.Nodes = append([]fleet.Node(nil), f.Nodes...)
	return &c
}

// admit takes a job's quota, borrowing from the cohort if it must, and
// reports whether there was room.
func (s *Sim) admit(p *pendingJob) bool {
	if _, err := s.book.Admit(tenantOf(p.a), s.need(p.a)); err != nil {
		return false
	}
	p.admitted = true
	return true
}

// unadmit gives back the quota of a job that did not start after all.
func (s *Sim) unadmit(p *pendingJob) {
	if err := s.book.Release(tenantOf(p.a), s.need(p.a)); err != nil {
		panic(fmt.Sprintf("sim: %v", err))
	}
	p.admitted = false
}

// usedGPUs is what a starting job asks of the GPUs it runs on: its tasks'
// demands (an elastic job may start with fewer tasks than it asked for),
// whatever its placements hold.
func (s *Sim) usedGPUs(p *pendingJob, parts []string) float64 {
	if len(parts) != 1 || parts[0] != p.a.Job.Name {
		return demandGPUs(p.a) // one placement per pod: every task placed
	}
	total := 0.0
	for _, t := range s.state.Job(parts[0]).Tasks {
		total += taskGPUs(p.a.Job.Groups[t.Group].Task)
	}
	return total
}

// sortPending keeps the pending list in arrival order, then by name, after
// an interrupted job is requeued.
func (s *Sim) sortPending() {
	sort.SliceStable(s.pending, func(i, j int) bool {
		a, b := s.pending[i].a, s.pending[j].a
		if a.At != b.At {
			return a.At < b.At
		}
		return a.Job.Name < b.Job.Name
	})
}

// wakeUp marks a job that is still waiting once its patience runs out, so
// that the next cycle tries it again (and may reclaim quota for it).
func (s *Sim) wakeUp(name string) {
	for _, p := range s.pending {
		if p.a.Job.Name == name || name == everyJob {
			p.fresh = true
		}
	}
}

// wakeLater schedules a retry of p when its patience runs out, once.
func (s *Sim) wakeLater(p *pendingJob) {
	if patience := s.reclaimPatience(); !p.wakeSet && s.now < p.a.At+patience {
		p.wakeSet = true
		s.schedule(event{at: p.a.At + patience, arrival: -1, wake: p.a.Job.Name})
	}
}

package server

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/queue"
	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/store"
)

// Reasons a waiting job did not start, as the queue shows them: the
// cycle's reason follows.
const (
	ReasonGPUs    = "waiting for GPUs"
	ReasonQuota   = "tenant GPU quota reached"
	ReasonPreempt = "preempting lower-priority work to make room"
	ReasonBudget  = "tenant budget reached"
)

// cycle is one scheduling pass: the server turns its jobs into a snapshot,
// the shared cycle (internal/sched) decides, and the server applies the
// decisions:
//  0. the rules of internal/eligible keep out of the pass the waiting
//     jobs that are held, before their begin time, waiting for their
//     dependencies or beyond their array's throttle (judge);
//  1. the other waiting jobs, the running jobs and the tenants' quotas
//     become a sched.Snapshot over the server's own core state;
//  2. sched.Cycle decides starts, preemptions, reservations and reasons;
//  3. each start is persisted and its tasks started, each preemption
//     persisted and its victim stopped, and every waiting job gets its
//     reason.
func (s *Server) cycle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saveEnds()
	s.admitSubmitted()
	if len(s.waiting) == 0 {
		return
	}
	s.loadTenants()
	s.judge()
	begin := time.Now()
	snap := s.snapshot()
	d := sched.Cycle(snap)
	s.mem.Reserved(d)
	s.applyStarts(d.Starts, snap.Now, begin)
	s.applyPreempts(d.Preempts)
	s.persistMemory()
	s.persistLearned(false)
	for i, w := range d.Waiting {
		if id, err := store.ParseID(w.Unit); err == nil {
			s.waits[id] = lastWait{Wait: w, ahead: i}
		}
	}
}

// lastWait is what the last cycle said of a waiting job: the core's Wait
// (why, and when it could start) and how many waiting jobs the cycle
// considered before it, in the cycle's own order.
type lastWait struct {
	sched.Wait
	ahead int
}

// reason is the text the queue and explain show for the wait; "" when
// the job has not been considered yet.
func (w lastWait) reason() string {
	if w.Unit == "" {
		return ""
	}
	return waitReason(w.Wait)
}

// code is the reason squeue would show for the wait: Resources,
// AssocGrpGRES when the tenant's quota holds the job back,
// AssocGrpGRESMinutes when its budget does (Slurm's GrpTRESMins); None
// before any cycle has considered it.
func (w lastWait) code() string {
	switch {
	case w.Unit == "":
		return "None"
	case w.Code == sched.CodeQuota:
		return "AssocGrpGRES"
	case w.Code == sched.CodeBudget:
		return "AssocGrpGRESMinutes"
	}
	return "Resources"
}

// estimatesAsked is how many waiting jobs the cycle tells when they
// could start beyond the one holding the reservation: enough for every
// queue a person reads on one box.
const estimatesAsked = 100

// snapshot is what the shared cycle reads: the core state, the quota
// ledger, the running jobs (any may be preempted by higher priority) and
// the waiting ones, each tenant a queue.
func (s *Server) snapshot() *sched.Snapshot {
	snap := &sched.Snapshot{
		Now:   s.now(),
		State: s.state,
		Config: sched.Config{Preemption: true, PriorityWithinQueue: true, FairShare: true, Attempts: s.cfg.Depth, Estimates: estimatesAsked,
			ReclaimPatience: sched.Patience(s.cfg.ReclaimPatience)},
	}
	for _, r := range s.runs {
		if r.drained {
			continue // its GPU failed: it is not in the core's state
		}
		snap.Running = append(snap.Running, runningOf(&r.job, s.need(&r.job), s.mem.Of(r.job.Name())))
	}
	slices.SortFunc(snap.Running, func(a, b sched.Running) int { return strings.Compare(a.Name, b.Name) })
	book, err := s.ledger.Sync(s.queueSpecs(), snap.Running, snap.Now)
	if err != nil {
		panic(fmt.Sprintf("server: %v", err)) // the tenants' specs are built valid
	}
	snap.Book = book
	snap.Config.Budgets, snap.Spent = s.budgets(snap.Now)
	s.mem.Keep(snap.Now, func(name string) bool {
		id, err := store.ParseID(name)
		if err != nil {
			return false
		}
		_, waits := s.waiting[id]
		return waits || s.runs[id] != nil
	})
	for _, j := range s.waiting {
		if _, out := s.blocked[j.ID]; out {
			continue
		}
		mem := s.mem.Of(j.Name())
		snap.Pending = append(snap.Pending, sched.Unit{
			Job: gangJob(&j), Queue: j.Tenant, Need: s.need(&j), Arrival: int64(j.ID), Claimed: mem.Claimed,
			Since: j.Submitted, NoBorrowUntil: mem.NoBorrowUntil, ReserveHint: s.mem.ReserveHint(j.Name()),
		})
	}
	slices.SortFunc(snap.Pending, func(a, b sched.Unit) int { return cmp.Compare(a.Arrival, b.Arrival) })
	return snap
}

// runningOf is a running job as the cycle sees it, with what the
// scheduler remembers of it: any running job may be preempted for one of
// higher priority, and its time limit is its estimated end.
func runningOf(j *store.Job, need queue.Amounts, mem sched.Remembered) sched.Running {
	r := sched.Running{Name: j.Name(), Queue: j.Tenant, Need: need, Priority: j.Spec.Priority, Preemptible: true, Started: j.Started,
		GPUs: float64(need[gpuFlavor]) / queue.Milli, CheckpointEvery: j.Spec.CheckpointEvery, Preemptions: mem.Preemptions}
	if j.Spec.TimeLimit > 0 {
		r.End = j.Started.Add(j.Spec.TimeLimit)
	}
	switch {
	case strings.HasPrefix(j.Stopping, preemptedBy):
		r.StoppingFor = strings.TrimPrefix(j.Stopping, preemptedBy)
	case j.Stopping != "":
		r.StoppingFor = "-"
	}
	return r
}

// preemptedBy starts Job.Stopping for a job preempted for another.
const preemptedBy = "preempted by "

// applyStarts persists and starts the jobs the cycle placed at its time
// now. A start that fails is undone in the core state and the ledger.
func (s *Server) applyStarts(starts []sched.Start, now, begin time.Time) {
	for _, st := range starts {
		id, err := store.ParseID(st.Unit.Job.Name)
		if err != nil {
			panic(fmt.Sprintf("server: cycle started unknown unit %q", st.Unit.Job.Name)) // units are named by job ID
		}
		j := s.waiting[id]
		s.ledger.Started(j.Name(), st.Unit.Queue, st.Admission.Need)
		if err := s.start(j, st.Placement, now); err != nil {
			s.ledger.Release(j.Name())
			s.log.Error("start job", "job", j.Name(), "err", err)
			continue
		}
		s.mem.Started(j.Name())
		s.metrics.decision.Observe(time.Since(begin).Seconds())
	}
}

// applyPreempts tells the scheduler's memory of the preemptions the
// cycle chose (each victim stopped once more, its back-off, the room it
// frees its unit's), persists it, and stops the victims.
func (s *Server) applyPreempts(preempts []sched.Preempt) {
	byFor := map[string][]*run{}
	victims := map[string]map[string]time.Time{}
	var order []string
	for _, p := range preempts {
		id, _ := store.ParseID(p.Victim)
		if r := s.runs[id]; r != nil {
			if byFor[p.For] == nil {
				order = append(order, p.For)
				victims[p.For] = map[string]time.Time{}
			}
			byFor[p.For] = append(byFor[p.For], r)
			victims[p.For][p.Victim] = p.NoBorrowUntil
		}
	}
	for _, unit := range order {
		s.mem.Preempted(unit, victims[unit])
	}
	s.persistMemory() // before the stops, which write the victims' records again
	for _, unit := range order {
		s.stopRuns(byFor[unit], preemptedBy+unit)
		s.metrics.preemptions.Add(float64(len(byFor[unit])))
	}
}

// waitReason is the text the queue and explain show for a waiting job.
func waitReason(w sched.Wait) string {
	switch w.Code {
	case sched.CodeQuota:
		return ReasonQuota + ": " + quotaWords(w)
	case sched.CodePreempting:
		return ReasonPreempt + ": " + w.Reason
	case sched.CodeCapacity, sched.CodeReserved:
		return ReasonGPUs + ": " + w.Reason
	case sched.CodeBudget:
		return ReasonBudget + ": " + w.Reason + forecast(w.Budget)
	}
	return w.Reason
}

func (s *Server) loadTenants() {
	ts, err := s.st.Tenants()
	if err != nil {
		s.log.Error("load tenants", "err", err)
		return
	}
	for _, t := range ts {
		s.tenants[t.Name] = t
	}
}

// stopRuns persists why the runs stop, then stops them with their grace
// periods. Their ends arrive through finish.
func (s *Server) stopRuns(runs []*run, why string) {
	err := s.st.Update(func(tx *store.Tx) error {
		for _, r := range runs {
			r.job.Stopping = why
			if err := tx.PutJob(&r.job); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.log.Error("persist stop", "why", why, "err", err)
	}
	for _, r := range runs {
		r.grace = s.graceOf(&r.job) // within the tenant's cap as it is now
		s.log.Info("stop job", "job", r.job.Name(), "why", why, "grace", r.grace)
		r.stop()
	}
}

// placementGPUs translates a core decision into physical GPUs.
func (s *Server) placementGPUs(p *gang.Placement) []store.Task {
	tasks := make([]store.Task, len(p.Tasks))
	for i, t := range p.Tasks {
		st := store.Task{Rank: i, Milli: t.Milli}
		for _, g := range t.GPUs {
			phys := s.phys[g]
			st.GPUs = append(st.GPUs, phys)
			st.Devices = append(st.Devices, fmt.Sprint(phys))
		}
		if t.MIG != nil {
			st.MIG, st.MIGStart = t.MIG.Profile, t.MIG.Start
			if uuid := s.freeMIGInstance(st.GPUs[0], t.MIG.Profile, tasks[:i]); uuid != "" {
				st.Devices = []string{uuid}
			}
		}
		tasks[i] = st
	}
	return tasks
}

// freeMIGInstance returns the UUID of an existing MIG instance of profile
// on physical GPU phys that no running task (nor one of also, being
// placed) has, in the order NVML listed them; "" if there is none.
func (s *Server) freeMIGInstance(phys int, profile string, also []store.Task) string {
	var instances []MIGInstance
	for _, g := range s.gpus {
		if g.Index == phys {
			instances = g.MIGInstances
		}
	}
	if len(instances) == 0 {
		return ""
	}
	taken := map[string]bool{}
	for _, r := range s.runs {
		for _, t := range r.job.Tasks {
			for _, d := range t.Devices {
				taken[d] = true
			}
		}
	}
	for _, t := range also {
		for _, d := range t.Devices {
			taken[d] = true
		}
	}
	for _, in := range instances {
		if in.Profile == profile && !taken[in.UUID] {
			return in.UUID
		}
	}
	return ""
}

// quotaWords says in a tenant's terms why its GPU quota holds a job back:
// the room its quota leaves, what of its own quota its cohort borrows,
// from whom and when it is taken back, then what the cycle does about it.
// Other quotas (CPU, memory) keep the core's words.
func quotaWords(w sched.Wait) string {
	qe := w.Quota
	if qe == nil || qe.Flavor == queue.CPU || qe.Flavor == queue.Memory || qe.Level != qe.Queue {
		return w.Reason
	}
	msg := fmt.Sprintf("tenant %s has room for %s more GPUs under its quota; this job needs %s",
		qe.Queue, queue.MilliString(qe.Room), queue.MilliString(qe.Need))
	switch rw := w.Reclaim; {
	case rw != nil:
		msg += fmt.Sprintf("; %s GPUs of its own quota are lent to cohort %s, used by tenant %s",
			queue.MilliString(qe.Reclaimable), rw.Cohort, strings.Join(rw.Borrowers, ", tenant "))
		if !rw.At.IsZero() {
			msg += fmt.Sprintf("; their jobs are stopped to give them back at %s, once this job has waited the reclaim patience (--reclaim-patience), and before then only their lower-priority jobs",
				rw.At.Local().Format(time.DateTime))
		}
	case qe.Reclaimable > 0:
		msg += fmt.Sprintf("; %s GPUs of its quota are lent to its cohort, but this job asks beyond the tenant's own quota, so none is taken back for it",
			queue.MilliString(qe.Reclaimable))
	}
	if w.Then != "" {
		msg += "; " + w.Then
	}
	return msg
}

package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/sched"
)

// corralPolicy is the cycle corral runs in every face: internal/sched's
// Cycle decides what starts, what is stopped or moved for whom, which jobs
// hold reservations, why the rest wait, and how elastic jobs resize; the
// simulator builds its snapshot and applies its decisions, as corral
// server and corral kube-scheduler do.
type corralPolicy struct{}

func (corralPolicy) Name() string { return "corral" }
func (corralPolicy) Describe() string {
	return "the shared cycle (internal/sched): gangs whole, packed and topology-aware; tenants by fair share within quota and borrowing; reclaim and preemption of the cheapest work; reservations and backfill"
}
func (corralPolicy) StateOptions() gang.Options { return gang.Options{} }

// epoch is the wall time the simulator's time zero stands for in the
// cycle's snapshots.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// maxRounds bounds the cycles run at one moment: the simulator stops a
// preempted job at once, so a cycle that preempts runs again for the jobs
// the stops made room for.
const maxRounds = 8

// Cycle runs the shared cycle until it changes nothing more that the next
// would act on.
func (corralPolicy) Cycle(s *Sim) {
	for range maxRounds {
		snap := s.coreSnapshot()
		if len(snap.Pending) == 0 && (len(s.growable) == 0 || snap.GrowKept) {
			s.units.Reserved(sched.Decisions{}) // nothing to decide: the cycle would say nothing
			break
		}
		d := sched.Cycle(snap)
		if !s.apply(d) {
			break
		}
	}
	s.units.Settle(s.settled())
}

// settled is the core state as the reservations kept from one cycle to
// the next depend on it: what is placed, and node health.
func (s *Sim) settled() sched.Settled {
	return sched.Settled{Version: s.state.Version(), HealthChanges: s.healthChanges}
}

// coreSnapshot is what the cycle reads: the placements and quota book the
// simulator keeps, its running jobs by estimated end, and its pending jobs
// in arrival order. When nothing has ended since the last cycle, the jobs
// that waited then cannot start now (the fleet and the quotas only filled
// up): only new arrivals, jobs woken up, those holding reservations and
// those the core did not try (Memory.Retry) are handed to it, which
// leaves the decisions as they were and keeps a replay of 100,000 jobs
// fast.
func (s *Sim) coreSnapshot() *sched.Snapshot {
	snap := &sched.Snapshot{Now: epoch.Add(s.now), State: s.state, Book: s.book, Config: s.coreConfig(), Spent: s.spent()}
	onlyNew := !s.freed && s.units.Claims() == 0
	now := s.settled() // the last cycle's reservations of room hold if nothing changed since
	s.freed = false
	for i, p := range s.pending {
		fresh := p.fresh
		p.fresh = false
		if onlyNew && !fresh && !s.units.Head(p.a.Job.Name) && !s.units.Retry(p.a.Job.Name) {
			continue // it did not fit before, and nothing has ended since
		}
		mem := s.units.Of(p.a.Job.Name)
		u := sched.Unit{Job: p.a.Job, Queue: tenantOf(p.a), Account: tenantOf(p.a), Need: s.need(p.a), Arrival: int64(i),
			Claimed: mem.Claimed, NoBorrowUntil: mem.NoBorrowUntil, Since: epoch.Add(p.a.At),
			ReserveHint: s.units.ReserveHint(p.a.Job.Name), Kept: s.units.Kept(p.a.Job.Name, now)}
		snap.Pending = append(snap.Pending, u)
	}
	snap.Running = s.coreRun
	snap.GrowKept = s.units.GrowKept(now)
	return snap
}

// coreConfig is corral's queue policy as the options set it: reclaim
// always, priority preemption when asked for, both within the hourly
// bound on preemptions.
func (s *Sim) coreConfig() sched.Config {
	cfg := sched.Config{Preemption: s.opt.PriorityPreemption, Reclaim: true, FairShare: true, Terse: s.opt.Explain == "",
		Reservations: s.opt.reservations(), ReclaimPatience: s.reclaimPatience(), Grace: s.opt.PreemptGrace, Budgets: s.budgets.of}
	if d := s.opt.Defrag; d.Enabled {
		cfg.Defrag = &sched.Defrag{Moves: max(d.movesPerHour()-s.moved.count(s.now), 0), MaxNodes: d.maxNodes()}
	}
	if limit := s.opt.MaxPreemptionsPerHour; limit > 0 {
		left := limit - s.preempted.count(s.now)
		cfg.PreemptionBudget = left
		if left <= 0 {
			cfg.Preemption, cfg.Reclaim = false, false
		}
	}
	return cfg
}

// coreRunning describes a running job for the cycle, as it starts (kept
// in s.coreRun beside s.byEnd; resize updates what changes). A job holds
// its tenant's quota when it was admitted; how often it was stopped
// before goes with it (the core stops none more than its bound allows).
func (s *Sim) coreRunning(name string) sched.Running {
	r := s.running[name]
	j := r.a.Job
	out := sched.Running{Name: name, Parts: r.parts, Priority: j.Priority, Started: epoch.Add(r.start),
		Preemptible: j.Preemptible, Preemptions: s.units.Of(name).Preemptions, Account: tenantOf(r.a),
		GPUs: r.gpus, CheckpointEvery: j.CheckpointEvery, Grow: s.growJob(r), Grown: r.grown}
	if r.admitted {
		out.Queue, out.Need = tenantOf(r.a), s.need(r.a)
	}
	if j.Runtime > 0 {
		out.End = epoch.Add(r.start + j.Runtime)
	}
	return out
}

// apply carries out one cycle's decisions: starts, stops, estimates,
// wake-ups for jobs whose patience or the preemption window runs out,
// and elastic jobs' resizes. It reports whether the cycle should run
// again at this moment: something was stopped or given back, or an
// elastic job started below its full size while nothing waits (the next
// cycle grows it).
func (s *Sim) apply(d sched.Decisions) bool {
	byName := make(map[string]*pendingJob, len(s.pending))
	for _, p := range s.pending {
		byName[p.a.Job.Name] = p
	}
	starts, madeRoom := splitMadeRoom(d)
	again := len(d.Preempts) > 0 || len(d.GiveBacks) > 0
	for _, st := range starts {
		s.startPlaced(byName[st.Unit.Job.Name], st.Placement, st.Unit.Queue != "")
		again = again || len(d.Waiting) == 0 && s.growable[st.Unit.Job.Name] // the next cycle grows it
	}
	for _, pr := range d.Preempts {
		s.stopForCore(pr, byName[pr.For])
	}
	for _, w := range d.Waiting {
		s.waited(w, byName[w.Unit])
	}
	s.wakeForBudget(len(d.Waiting) > 0)
	s.gaveBackAll(d.GiveBacks)
	if madeRoom != nil {
		s.startPlaced(byName[madeRoom.Unit.Job.Name], madeRoom.Placement, madeRoom.Unit.Queue != "")
	}
	for _, g := range d.Grows {
		s.grew(g)
	}
	s.units.Reserved(d)
	return again
}

// splitMadeRoom separates the start that parts given back made room for,
// which the cycle decides last, from the other starts.
func splitMadeRoom(d sched.Decisions) ([]sched.Start, *sched.Start) {
	n := len(d.Starts)
	if len(d.GiveBacks) > 0 && n > 0 && d.Starts[n-1].Unit.Job.Name == d.GiveBacks[0].For {
		return d.Starts[:n-1], &d.Starts[n-1]
	}
	return d.Starts, nil
}

// waited records that p waits as w says: its first start estimate, what
// moves for it gain, its story, and the wake-ups it needs.
func (s *Sim) waited(w sched.Wait, p *pendingJob) {
	if rec := &s.records[s.byName[w.Unit]]; (w.Code == sched.CodeCapacity || w.Code == sched.CodeQuota) && !w.Estimate.IsZero() && rec.Estimate == 0 {
		rec.Estimate, rec.EstimatedAt = w.Estimate.Sub(epoch), s.now
	}
	if w.Defrag != nil {
		s.defragGainGPUH += w.Defrag.GainGPUH - w.Defrag.LostGPUH
	}
	s.noteWait(w)
	s.heldByBudget(w)
	s.wakeLater(p)
}

// gaveBackAll applies the parts elastic jobs gave back, all released by
// the cycle already: s.gone holds each until it is applied, for the
// hour's series.
func (s *Sim) gaveBackAll(gbs []sched.GiveBack) {
	if len(gbs) == 0 {
		return
	}
	for _, gb := range gbs {
		s.gone[gb.Part] = gb.Placement
	}
	for _, gb := range gbs {
		s.gaveBack(gb)
	}
	s.note(gbs[0].For, "elastic jobs give back %d grown placements to make room", len(gbs))
}

// noteWait tells the explained job why it waits, with the cycle's times
// as the simulator's hours.
func (s *Sim) noteWait(w sched.Wait) {
	if w.Unit != s.opt.Explain {
		return
	}
	reason := w.Reason
	if !w.Estimate.IsZero() {
		reason = strings.ReplaceAll(reason, w.Estimate.UTC().Format(time.RFC3339), fmt.Sprintf("%.2fh", w.Estimate.Sub(epoch).Hours()))
	}
	s.note(w.Unit, "waits (%s): %s", w.Code, reason)
}

// startPlaced starts a job the cycle placed (and admitted, with quota).
func (s *Sim) startPlaced(p *pendingJob, pl *gang.Placement, admitted bool) {
	s.acct.allocated += placedGPUs(pl)
	s.series.hold(pl, 1)
	s.placedOn(pl)
	p.admitted = admitted
	s.units.Started(p.a.Job.Name)
	s.start(p, []string{p.a.Job.Name})
}

// stopForCore stops a victim at once, with the grace to checkpoint in
// when there is one; the job it makes room for starts when the grace runs
// out, on the capacity held for it. A victim that gave quota back may not
// borrow again until the core says; a victim moved out of the way
// (defragmentation) is placed again in the room left, this moment.
func (s *Sim) stopForCore(pr sched.Preempt, p *pendingJob) {
	rec := &s.records[s.byName[pr.Victim]]
	cause := "preempted by higher-priority " + pr.For
	switch {
	case pr.Move:
		rec.Moves++
		cause = "moved to make room for " + pr.For
		s.moved.add(s.now)
	case pr.Reclaim:
		cause = "preempted for " + pr.For
		fallthrough
	default:
		rec.Preemptions++
		s.preempted.add(s.now)
	}
	s.units.Preempted(pr.For, map[string]time.Time{pr.Victim: pr.NoBorrowUntil})
	s.interrupt(pr.Victim, pr.Grace > 0, cause)
	if pr.Move {
		s.schedule(event{at: s.now, arrival: -1, wake: pr.Victim})
	}
	p.startDelay = pr.Grace
}

// everyJob, as the job a wake-up is for, wakes every pending job.
const everyJob = "\x00all"

// wakeForBudget schedules a cycle for when the hourly bound on
// preemptions frees a stop, while jobs wait and the bound is reached.
func (s *Sim) wakeForBudget(waiting bool) {
	limit := s.opt.MaxPreemptionsPerHour
	if !waiting || limit <= 0 || s.preempted.count(s.now) < limit {
		return
	}
	if at := s.preempted[0] + time.Hour; at > s.budgetWake {
		s.budgetWake = at
		s.schedule(event{at: at, arrival: -1, wake: everyJob})
	}
}

package eligible

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Reasons a job is not given to the cycle, as squeue names them.
const (
	Held           = "JobHeldUser"
	BeginTime      = "BeginTime"
	Waiting        = "Dependency"
	NeverSatisfied = "DependencyNeverSatisfied"
	ArrayLimit     = "JobArrayTaskLimit"
)

// Status is where a job named in a dependency is.
type Status int

// The statuses of a job named in a dependency.
const (
	Unknown Status = iota // no such job
	Queued                // waiting to run (again)
	Running
	Succeeded
	Failed // failed, timed out, ran out of memory, lost
	Cancelled
)

func (s Status) final() bool { return s == Succeeded || s == Failed || s == Cancelled }

// Dep is what a dependency needs to know of the job it names.
type Dep struct {
	Status  Status
	Started bool // it has run at least once
	// Since is when it last started, or ended if it never started: what
	// an after dependency's delay counts from.
	Since time.Time
}

// Job is a waiting job as the rules see it.
type Job struct {
	ID     uint64
	Tenant string
	Name   string // its job name as squeue shows it, for singleton
	Held   bool
	Begin  time.Time // zero: no --begin
	Deps   Dependency
	// Started: it ran before and waits again (requeued, preempted); its
	// dependencies were met then and are not asked again.
	Started bool
	Array   uint64 // the array it is a task of (0: none)
	Limit   int    // the array's throttle: most tasks running at once (0: none)
}

// Active is a job that waits or runs, for singleton and array
// throttles.
type Active struct {
	ID      uint64
	Tenant  string
	Name    string
	Running bool
	Array   uint64
}

// World is everything the rules read.
type World struct {
	Now time.Time
	// Deps holds the state of every job named in a dependency.
	Deps map[uint64]Dep
	// Active are the waiting and running jobs.
	Active []Active
	// Name formats a job ID in a reason (default: the number).
	Name func(uint64) string
}

// Verdict is whether a job may be given to the cycle: Reason is "" when
// it may, else one of the reasons above, with Detail saying why in
// words.
type Verdict struct {
	Reason string
	Detail string
}

// Eligible reports whether the job may be scheduled.
func (v Verdict) Eligible() bool { return v.Reason == "" }

// Never reports whether the job's dependencies can never be met.
func (v Verdict) Never() bool { return v.Reason == NeverSatisfied }

// String is the reason and its detail, as the queue shows them.
func (v Verdict) String() string {
	if v.Detail == "" {
		return v.Reason
	}
	return v.Reason + ": " + v.Detail
}

// Evaluate gives a verdict for each of pending, in its order:
//  1. a held job waits for its release;
//  2. a job whose dependencies can never be met says so;
//  3. a job before its begin time waits for it;
//  4. a job whose dependencies are not yet met waits for them;
//  5. of an array's otherwise eligible tasks, only as many as its
//     throttle leaves room for beside its running ones go, lowest job ID
//     first.
func Evaluate(w World, pending []Job) []Verdict {
	if w.Name == nil {
		w.Name = func(id uint64) string { return fmt.Sprint(id) }
	}
	out := make([]Verdict, len(pending))
	for i, j := range pending {
		out[i] = w.single(j)
	}
	w.throttle(pending, out)
	return out
}

// single applies steps 1 to 4 to one job.
func (w World) single(j Job) Verdict {
	if j.Held {
		return Verdict{Held, "held by its user; 'corral release " + w.Name(j.ID) + "' lets it run"}
	}
	var dep Verdict
	if !j.Started {
		dep = w.dependency(j)
	}
	if dep.Never() {
		return dep
	}
	if w.Now.Before(j.Begin) {
		return Verdict{BeginTime, "starts no earlier than " + j.Begin.UTC().Format(time.RFC3339)}
	}
	return dep
}

// termState is how far a term, or a whole dependency, is met.
type termState int

const (
	met termState = iota
	pendingState
	never
)

// dependency is the verdict of j's dependencies alone.
func (w World) dependency(j Job) Verdict {
	if j.Deps.None() {
		return Verdict{}
	}
	var states []termState
	var why []string
	for _, t := range j.Deps.Terms {
		st, detail := w.term(j, t)
		states = append(states, st)
		if st != met {
			why = append(why, detail)
		}
	}
	switch combine(states, j.Deps.Any) {
	case met:
		return Verdict{}
	case never:
		return Verdict{NeverSatisfied, strings.Join(why, "; ")}
	}
	return Verdict{Waiting, strings.Join(why, "; ")}
}

// combine is the state of terms joined by ',' (all) or '?' (any).
func combine(states []termState, any bool) termState {
	best, worst := never, met
	for _, s := range states {
		best, worst = min(best, s), max(worst, s)
	}
	if any {
		return best
	}
	return worst
}

// term is how far one term is met, and in words why not.
func (w World) term(j Job, t Term) (termState, string) {
	if t.Kind == Singleton {
		for _, a := range w.Active {
			if a.ID != j.ID && a.Tenant == j.Tenant && a.Name == j.Name && (a.Running || a.ID < j.ID) {
				return pendingState, fmt.Sprintf("singleton: %s of the same name %q is not done", w.Name(a.ID), j.Name)
			}
		}
		return met, ""
	}
	var states []termState
	var why []string
	for i, id := range t.Jobs {
		d, ok := w.Deps[id]
		if !ok {
			d = Dep{Status: Unknown}
		}
		st := meets(t.Kind, d)
		detail := describe(d, st)
		if delay := t.delay(i); delay > 0 && st == met && w.Now.Before(d.Since.Add(delay)) {
			st, detail = pendingState, delayed(d, delay)
		}
		states = append(states, st)
		if st != met {
			why = append(why, fmt.Sprintf("%s:%s %s", t.Kind, w.Name(id), detail))
		}
	}
	return combine(states, false), strings.Join(why, ", ")
}

// meets is how far a job in state d meets a dependency of kind k.
func meets(k Kind, d Dep) termState {
	if d.Status == Unknown {
		return never
	}
	switch k {
	case After:
		if d.Started || d.Status.final() {
			return met
		}
	case AfterAny:
		if d.Status.final() {
			return met
		}
	case AfterOK:
		switch {
		case d.Status == Succeeded:
			return met
		case d.Status.final():
			return never
		}
	case AfterNotOK:
		switch {
		case d.Status == Succeeded:
			return never
		case d.Status.final():
			return met
		}
	}
	return pendingState
}

func describe(d Dep, st termState) string {
	names := map[Status]string{Unknown: "is no job", Queued: "has not run yet", Running: "still runs",
		Succeeded: "completed", Failed: "failed", Cancelled: "was cancelled"}
	if d.Status == Queued && d.Started {
		return "waits to run again"
	}
	if st == never && d.Status != Unknown {
		return names[d.Status] + ", so this never runs"
	}
	return names[d.Status]
}

// delayed says why an after dependency met by d still waits for its
// delay.
func delayed(d Dep, delay time.Duration) string {
	what := "started"
	if !d.Started {
		what = describe(d, met)
	}
	return fmt.Sprintf("%s at %s; its %d-minute delay ends at %s", what, d.Since.UTC().Format(time.RFC3339),
		int(delay/time.Minute), d.Since.Add(delay).UTC().Format(time.RFC3339))
}

// throttle applies step 5: it turns the verdicts of an array's tasks
// beyond its throttle into ArrayLimit.
func (w World) throttle(pending []Job, out []Verdict) {
	running := map[uint64]int{}
	for _, a := range w.Active {
		if a.Running && a.Array != 0 {
			running[a.Array]++
		}
	}
	order := make([]int, len(pending))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(pending[a].ID, pending[b].ID) })
	for _, i := range order {
		j := pending[i]
		if j.Array == 0 || j.Limit <= 0 || !out[i].Eligible() {
			continue
		}
		if running[j.Array] >= j.Limit {
			out[i] = Verdict{ArrayLimit, fmt.Sprintf("array %s has %d tasks running or about to start, its limit (%%%d)", w.Name(j.Array), running[j.Array], j.Limit)}
			continue
		}
		running[j.Array]++ // given to the cycle: it may start now
	}
}

package eligible

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind is a type of dependency, as sbatch's --dependency names it.
type Kind string

// The kinds of dependency.
const (
	After      Kind = "after"      // the jobs have started (or were cancelled before)
	AfterAny   Kind = "afterany"   // the jobs have ended, however
	AfterOK    Kind = "afterok"    // the jobs have completed (exit 0)
	AfterNotOK Kind = "afternotok" // the jobs have ended otherwise: failed, timed out, cancelled
	Singleton  Kind = "singleton"  // no other job of the same name and tenant runs, or waits from before
)

// Ref is a job named in a dependency: Job, or task Task of the array
// whose job ID is Job when HasTask. Delay is sbatch's after:JOB+MINUTES:
// how long after the job started (or was cancelled before it did) the
// dependency is met.
type Ref struct {
	Job     uint64
	Task    int
	HasTask bool
	Delay   time.Duration
}

// Term is one dependency: a kind and the jobs it names (none for
// singleton). Refs are as written; Jobs are the job IDs they resolve to
// (an array's ID names every task of it), set by the caller with Add.
// Delays, when any job has one, is the delay of each of Jobs.
type Term struct {
	Kind   Kind            `json:"kind"`
	Refs   []Ref           `json:"-"`
	Jobs   []uint64        `json:"jobs,omitempty"`
	Delays []time.Duration `json:"delays,omitempty"`
}

// Add adds a job the term names, with the delay of the reference that
// named it.
func (t *Term) Add(id uint64, delay time.Duration) {
	if delay != 0 && t.Delays == nil {
		t.Delays = make([]time.Duration, len(t.Jobs))
	}
	t.Jobs = append(t.Jobs, id)
	if t.Delays != nil {
		t.Delays = append(t.Delays, delay)
	}
}

// delay is the delay of the term's i-th job.
func (t Term) delay(i int) time.Duration {
	if i < len(t.Delays) {
		return t.Delays[i]
	}
	return 0
}

// Dependency is a job's dependencies: all of its terms must be met, or,
// when Any (sbatch's '?' separator), one of them.
type Dependency struct {
	Terms []Term `json:"terms,omitempty"`
	Any   bool   `json:"any,omitempty"`
}

// None reports whether d has no terms.
func (d Dependency) None() bool { return len(d.Terms) == 0 }

// Forms lists what ParseDependency takes.
const Forms = "TYPE:JOB[:JOB...] joined by ',' (all) or '?' (any), TYPE one of after, afterany, afterok, afternotok, or singleton; JOB is j000017, 17 or an array task 17_3; after takes a delay in minutes, after:17+10"

// ParseDependency reads sbatch's --dependency value, such as
// afterok:17:18,afterany:j000019 or singleton. "" is no dependency.
func ParseDependency(s string) (Dependency, error) {
	var d Dependency
	s = strings.TrimSpace(s)
	if s == "" {
		return d, nil
	}
	if strings.Contains(s, ",") && strings.Contains(s, "?") {
		return d, errors.New("mixes ',' and '?': give all terms one separator")
	}
	sep := ","
	if strings.Contains(s, "?") {
		sep, d.Any = "?", true
	}
	for _, item := range strings.Split(s, sep) {
		t, err := parseTerm(item)
		if err != nil {
			return Dependency{}, err
		}
		d.Terms = append(d.Terms, t)
	}
	return d, nil
}

func parseTerm(item string) (Term, error) {
	parts := strings.Split(item, ":")
	t := Term{Kind: Kind(strings.ToLower(parts[0]))}
	switch t.Kind {
	case Singleton:
		if len(parts) > 1 {
			return t, fmt.Errorf("%q: singleton names no jobs", item)
		}
		return t, nil
	case After, AfterAny, AfterOK, AfterNotOK:
	case "aftercorr", "afterburstbuffer":
		return t, fmt.Errorf("%q: %s is not supported on one machine; want %s", item, t.Kind, Forms)
	default:
		return t, fmt.Errorf("%q: unknown type %q; want %s", item, parts[0], Forms)
	}
	if len(parts) < 2 {
		return t, fmt.Errorf("%q: names no job; want %s", item, Forms)
	}
	for _, p := range parts[1:] {
		p, minutes, hasDelay := strings.Cut(p, "+")
		r, err := ParseRef(p)
		if err != nil {
			return t, fmt.Errorf("%q: %w", item, err)
		}
		if hasDelay {
			if r.Delay, err = parseDelay(t.Kind, minutes); err != nil {
				return t, fmt.Errorf("%q: %w", item, err)
			}
		}
		t.Refs = append(t.Refs, r)
	}
	return t, nil
}

// maxDelay bounds a dependency's delay: a year of minutes.
const maxDelay = 365 * 24 * time.Hour

// parseDelay reads the minutes of after:JOB+MINUTES; as sbatch, only
// after takes one.
func parseDelay(k Kind, minutes string) (time.Duration, error) {
	if k != After {
		return 0, fmt.Errorf("a delay (+minutes) is taken by after only, as sbatch takes it, not by %s", k)
	}
	n, err := strconv.Atoi(minutes)
	if err != nil || n < 0 || strings.Trim(minutes, "0123456789") != "" {
		return 0, fmt.Errorf("delay %q: want whole minutes, as after:17+10", minutes)
	}
	d := time.Duration(n) * time.Minute
	if d > maxDelay {
		return 0, fmt.Errorf("delay %q: at most %d minutes (a year)", minutes, int(maxDelay/time.Minute))
	}
	return d, nil
}

// ParseRef reads a job reference: j000017 or 17, or task 3 of array 17
// as 17_3 or j000017_3.
func ParseRef(s string) (Ref, error) {
	id, task, hasTask := strings.Cut(strings.TrimPrefix(s, "j"), "_")
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || n == 0 || strings.Trim(id, "0123456789") != "" {
		return Ref{}, fmt.Errorf("job %q: want j000017, 17 or 17_3", s)
	}
	r := Ref{Job: n, HasTask: hasTask}
	if hasTask {
		if r.Task, err = strconv.Atoi(task); err != nil || r.Task < 0 || strings.Trim(task, "0123456789") != "" {
			return Ref{}, fmt.Errorf("job %q: array task %q: want a number", s, task)
		}
	}
	return r, nil
}

// String writes d as sbatch takes it, with the jobs resolved, named by
// name.
func (d Dependency) String(name func(uint64) string) string {
	sep := ","
	if d.Any {
		sep = "?"
	}
	var items []string
	for _, t := range d.Terms {
		parts := []string{string(t.Kind)}
		for i, id := range t.Jobs {
			ref := name(id)
			if d := t.delay(i); d > 0 {
				ref += fmt.Sprintf("+%d", int(d/time.Minute))
			}
			parts = append(parts, ref)
		}
		items = append(items, strings.Join(parts, ":"))
	}
	return strings.Join(items, sep)
}

// IDs lists every job d names, in the order written.
func (d Dependency) IDs() []uint64 {
	var out []uint64
	for _, t := range d.Terms {
		out = append(out, t.Jobs...)
	}
	return out
}

package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/workload"
)

// Options tune a replay.
type Options struct {
	// Explain names a job whose story — arrival, every reason it waited,
	// start, stops, end — the result tells in Result.Explain.
	Explain string
	// PreemptGrace is the notice a job stopped to give quota back gets:
	// a job that checkpoints saves all its work in it, and the job that
	// reclaimed the quota starts when it runs out, on the capacity held
	// for it. Zero stops victims at once, keeping their last periodic
	// checkpoint.
	PreemptGrace time.Duration
	// MaxPreemptionsPerHour bounds the stops to give quota back in any
	// hour; zero leaves them unbounded. A reclaim that would exceed it
	// waits for the window to move.
	MaxPreemptionsPerHour int
	// ReclaimPatience is how long a job within its tenant's quota waits
	// for room to appear by itself before it stops borrowers of its
	// priority or above: 0 is sched.DefaultReclaimPatience, as in the
	// server and the Kubernetes face; negative reclaims at once.
	ReclaimPatience time.Duration
	// Autoscale sizes pools of the fleet between a minimum and a maximum
	// number of nodes.
	Autoscale []Autoscale
	// Defrag moves small checkpointing jobs for a gang kept waiting by
	// scattered free GPUs (corral only; off by default).
	Defrag Defrag
	// Progress, when set, is told from time to time how many of the
	// workload's jobs have arrived (done of total); it must not block.
	Progress func(done, total int)
	// Observe, when set, is shown the fleet before each moment's events
	// and once at the end: st is the state since the previous call, and
	// at the moment it changes. It must not change st.
	Observe func(at time.Duration, st *gang.State)
	// PriorityPreemption lets a job whose quota has room stop running
	// preemptible jobs of lower priority when only placement keeps it
	// waiting.
	PriorityPreemption bool
	// Backfill is corral's backfill: "easy" (the default: one reservation,
	// for the first job that does not fit) or "conservative" (reservations
	// for the first Reservations jobs that do not fit, none of which a
	// backfilled job may delay).
	Backfill     string
	Reservations int // conservative: jobs holding reservations (0: 8)
	// Budgets caps tenants' GPU-hours per period (corral only): a job
	// that would overrun its tenant's budget waits (sched.CodeBudget).
	// A fixed period counts from the replay's time zero; a calendar month
	// (Every 0) from the simulator's epoch, 2000-01-01.
	Budgets map[string]sched.Budget
	// Quotas are nominal GPU quotas the user gives tenants; the tenants
	// it does not name share what is left by their share of the workload's
	// GPU-hours, as all do without it (newBook).
	Quotas map[string]float64
	// ImagePull, when set, makes nodes pull the images of the jobs placed
	// on them before their tasks start (images.go).
	ImagePull *ImagePull
}

// Backfill modes.
const (
	EasyBackfill         = "easy"
	ConservativeBackfill = "conservative"
)

// reservations is how many waiting jobs hold a reservation.
func (o Options) reservations() int {
	if o.Backfill == ConservativeBackfill {
		return cmpOr(o.Reservations, 8)
	}
	return 1
}

func (o Options) check() error {
	if o.Backfill != "" && o.Backfill != EasyBackfill && o.Backfill != ConservativeBackfill {
		return fmt.Errorf("options: backfill %q: want %q or %q", o.Backfill, EasyBackfill, ConservativeBackfill)
	}
	if o.PreemptGrace < 0 || o.Reservations < 0 || o.MaxPreemptionsPerHour < 0 || o.Defrag.MaxMovesPerHour < 0 || o.Defrag.MaxNodes < 0 {
		return fmt.Errorf("options: preempt grace %v, preemptions per hour %d and defragmentation bounds %+v must not be negative", o.PreemptGrace, o.MaxPreemptionsPerHour, o.Defrag)
	}
	return nil
}

// note adds a line to the story of the explained job, skipping a line
// that repeats the one before.
func (s *Sim) note(name, format string, args ...any) {
	if name != s.opt.Explain || name == "" {
		return
	}
	msg := fmt.Sprintf(format, args...)
	s.waitNoted = s.waitNoted || strings.HasPrefix(msg, "waits") || strings.HasPrefix(msg, "reserved")
	if n := len(s.story); n > 0 && strings.HasSuffix(s.story[n-1], "  "+msg) {
		return
	}
	s.story = append(s.story, fmt.Sprintf("%9.2fh  %s", s.now.Hours(), msg))
}

// whyWaiting notes why p could not start now.
func (s *Sim) whyWaiting(p *pendingJob, j *job.Job, quota bool) {
	name := p.a.Job.Name
	if name != s.opt.Explain {
		return
	}
	if quota && !p.admitted {
		if err := s.book.CanAdmit(tenantOf(p.a), s.need(p.a)); err != nil {
			s.note(name, "waits: tenant %s's quota, with what its cohort lends, has no room for %.2f GPUs", tenantOf(p.a), demandGPUs(p.a))
			return
		}
	}
	if reasons := s.state.Explain(j).Lines(); len(reasons) > 0 {
		s.note(name, "waits: %s", strings.Join(reasons, "; "))
	}
}

// explainStillWaiting notes why the explained job waits after a cycle
// whose policy did not say, and had not said since the job arrived or
// last ran: what placement finds, or that it would fit and the policy
// held it.
func (s *Sim) explainStillWaiting() {
	if s.opt.Explain == "" || s.waitNoted || len(s.story) == 0 {
		return
	}
	if last := s.story[len(s.story)-1]; strings.Contains(last, "  waits") || strings.Contains(last, "  reserved") {
		return // what the policy said last still stands
	}
	for _, p := range s.pending {
		if p.a.Job.Name != s.opt.Explain || p.startDelay > 0 {
			continue
		}
		if reasons := s.state.Explain(p.a.Job).Lines(); len(reasons) > 0 {
			s.note(p.a.Job.Name, "waits: %s", strings.Join(reasons, "; "))
			return
		}
		s.note(p.a.Job.Name, "waits: it would fit now; the policy held it (its order, quota or a reservation)")
		return
	}
}

// noteReserved tells the explained job's reservation: when it is expected
// to start, or that it may never start and why: it fits once running jobs
// without an estimate end, or not even then.
func (s *Sim) noteReserved(head *job.Job, place int, r *reservationCache) {
	if head.Name != s.opt.Explain || head.Name == "" {
		return
	}
	if r.at != forever {
		s.note(head.Name, "reserved (%d in line): expected to start at %.2fh, as running jobs end by their estimates", place, r.at.Hours())
		return
	}
	why := "it does not fit even with every running job gone"
	if s.resvs[head.Name].k > 0 { // the reservation as last computed
		why = "running jobs without a runtime estimate hold the room it needs"
	}
	s.note(head.Name, "reserved (%d in line): expected to start never (%s)", place, why)
}

// RunWith replays w on a copy of f under p with options.
func RunWith(f *fleet.Fleet, w workload.Workload, p Policy, opt Options) (*Result, error) {
	return replay(f, w, p, opt)
}

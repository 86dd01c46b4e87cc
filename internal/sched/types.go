package sched

import (
	"time"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/queue"
)

// Unit is one piece of pending work: a job, all of whose tasks start in
// one decision, charged to a queue.
type Unit struct {
	Job     *job.Job
	Queue   string        // a leaf queue of the Book; "" when quota does not apply
	Need    queue.Amounts // what it charges its queue
	Arrival int64         // smaller arrived earlier; ties in a queue's order
	// Blocked is why the face knows the unit cannot start whatever the
	// fleet (a pod group missing members); "" otherwise.
	Blocked string
	// Claimed says that running units were stopped for this unit and it
	// has not started since: the room they free is its own, so it is
	// considered before every other unit.
	Claimed bool
	// NeverPreempts keeps the unit from stopping other work, whatever its
	// priority (Kubernetes' preemptionPolicy: Never).
	NeverPreempts bool
	// Freeing, with Blocked, says the face's own rules allow some of the
	// unit's tasks on no node now (Kubernetes' filters: ports, inter-pod
	// anti-affinity, the pods a node takes), but would on a node once some
	// running units there stop: for each such task, the ways to free a
	// node for it. The cycle may stop them as it stops work to make room,
	// a node of its own for each task; otherwise the unit waits for room
	// (CodeCapacity), Blocked saying why.
	Freeing [][]Freeing
	// Since is when it began to wait; with Config.ReclaimPatience it may
	// reclaim lent quota only once it has waited that long. Zero: always.
	Since time.Time
	// NoBorrowUntil: until then it is admitted only within its queue's
	// own quota, borrowing nothing (a back-off after it was preempted to
	// give quota back, so that it is not caught in a preempt-requeue loop).
	NoBorrowUntil time.Time
	// ReserveHint is how many running units its reservation released in the
	// last cycle (0: none); the search for this cycle's starts there, as
	// the answer changes little from one cycle to the next. The answer is
	// the same whatever the hint.
	ReserveHint int
	// Kept is the reservation of room (not of quota) the unit held at the
	// end of the face's last cycle, given only when the face knows that
	// nothing has changed since: the same State.Version and node health.
	// When nothing starts or stops ahead of the unit in this cycle either,
	// the cycle keeps it instead of searching again (backfill never
	// delays a reservation, so the room it names is still the least); nil:
	// search.
	Kept *Reservation
	// Account is the budget it is charged to (Config.Budgets); "": Queue.
	Account string
}

// Freeing is one way to let a blocked task start: the running units
// whose stop makes the face's rules allow it on Node.
type Freeing struct {
	Node    string
	Victims []string // running units, by name
}

// Running is one unit the fleet runs, placed in the State under Name, or
// under the names in Parts when it is several placed jobs (a pod group
// whose pods were bound one by one).
type Running struct {
	Name        string
	Parts       []string
	Queue       string
	Need        queue.Amounts // what it is charged in its queue
	Priority    int
	Preemptible bool      // may be stopped for higher-priority work
	Started     time.Time // when it started
	End         time.Time // its estimated end; zero when unknown
	// StoppingFor names the unit this one is being stopped for ("" when it
	// is not stopping, "-" when it stops for another reason). A stopping
	// unit is never chosen as a victim again.
	StoppingFor string
	// GPUs it holds and how often it checkpoints (0: never), from which
	// the cycle counts the GPU-hours stopping it now would lose: among
	// victims of equal priority the cheapest are stopped first. A unit
	// that does not checkpoint loses all it ran, so without checkpoints
	// this is the youngest first.
	GPUs            float64
	CheckpointEvery time.Duration
	// LastCheckpoint is when it last wrote a checkpoint, where its face
	// knows (a job that says so); then its work since is what stopping it
	// loses. Zero: reckoned from Started and CheckpointEvery.
	LastCheckpoint time.Time
	// Preemptions is how often it was stopped for other work before; at
	// Config.MaxPreemptions it is no longer a victim, which ends any
	// preempt-requeue loop.
	Preemptions int
	// Account is the budget it is charged to (Config.Budgets); "": Queue.
	Account string
	// Grow, for an elastic unit running below its full size, is what it
	// may still add: a job of the tasks it runs without, any number of
	// which may start (MinMember 1), named for the part it would add
	// (elastic.go). nil: it runs whole, or its face does not resize.
	Grow *job.Job
	// Grown lists the parts it grew by, oldest first: surplus it gives
	// back, newest first, to a unit that waits for room.
	Grown []string
}

// Snapshot is everything one cycle reads.
type Snapshot struct {
	Now     time.Time
	State   *gang.State // every Running unit placed under its name
	Book    *queue.Book // every Running unit's need admitted; nil: no quotas
	Running []Running
	Pending []Unit
	Config  Config
	// Spent is, by account, the GPU-hours that work no longer running
	// used in the current period of its budget (Config.Budgets); the
	// running units' use the cycle counts itself (budget.go).
	Spent map[string]float64
	// GrowKept says the face knows the last cycle tried to grow every
	// elastic unit and nothing changed since (Memory.GrowKept): the
	// cycle does not try again.
	GrowKept bool
}

// Config tunes the cycle. The zero value is a cycle without preemption
// that tries up to DefaultAttempts placements.
type Config struct {
	// Preemption lets a unit within its quota stop running units of lower
	// priority that are Preemptible when that makes room for it, and take
	// back quota its queue lent (as Reclaim).
	Preemption bool
	// PriorityWithinQueue makes priority a queue's own business: a unit
	// stops only units of its own queue for its priority, and another
	// queue's only by reclaiming the quota its queue lent (Reclaim, once
	// its patience is out), never for a number the queue set itself.
	PriorityWithinQueue bool
	// Reclaim lets a unit within its queue's own quota stop Preemptible
	// units of borrowing queues in its cohort, whatever their priority,
	// when they hold what its queue lent; on with Preemption.
	Reclaim bool
	// Attempts bounds the placements tried in one cycle (units skipped for
	// quota or for a shape that already failed do not count); 0 means
	// DefaultAttempts.
	Attempts int
	// FairShare orders queued units by their queues' fair share, each
	// queue's in its own order; without it every unit goes by priority,
	// then arrival (Kubernetes' PrioritySort).
	FairShare bool
	// Reservations is how many waiting units hold a reservation that later
	// units may not delay; 0 means 1, negative none (every unit starts as
	// soon as it fits, however long a larger one ahead of it has waited).
	Reservations int
	// Estimates is how many more units waiting for room are told when
	// they could start, without a reservation (Wait.Estimate, Held false):
	// a face that explains waits asks for them; 0: none. They change no
	// decision.
	Estimates int
	// Charge, when set, is what a started unit is admitted for, from its
	// placement (a share or a MIG slice counts what the node gives it);
	// Unit.Need is then only the check before placing. Nil: Unit.Need.
	Charge func(*gang.Placement) queue.Amounts
	// ReclaimPatience is how long a unit waits (Unit.Since) for room to
	// appear by itself before it stops borrowers to take its lent quota
	// back; 0: at once.
	ReclaimPatience time.Duration
	// PreemptionBudget bounds the units this cycle may stop (a face's
	// bound per hour, less what it stopped in the last hour); 0: no bound.
	// A face with none left turns Preemption off.
	PreemptionBudget int
	// Grace is the notice a stopped unit gets to checkpoint and exit,
	// given with each Preempt.
	Grace time.Duration
	// Terse leaves out of a waiting unit's reason where the fleet fell
	// short for it (the placement's explanation costs a pass over the
	// fleet for every unit that does not fit); the decisions are the
	// same. The simulator sets it unless a job's story is asked for.
	Terse bool
	// MaxPreemptions is how often one unit may be stopped for other work
	// (Running.Preemptions); 0 is DefaultMaxPreemptions, negative no bound.
	MaxPreemptions int
	// ReborrowBackoff is how long a unit stopped to give lent quota back
	// may not borrow again (Preempt.NoBorrowUntil), doubling with each
	// earlier preemption; 0 is DefaultReborrowBackoff, negative none.
	ReborrowBackoff time.Duration
	// Defrag, when set, lets the first unit that waits for room start by
	// moving small checkpointing units out of its way (defrag.go); nil:
	// off.
	Defrag *Defrag
	// Budgets caps the GPU-hours of accounts per period, by account (a
	// Unit's Account, or its Queue); a unit that would overrun its
	// account's budget waits (CodeBudget). Nil: no budgets.
	Budgets map[string]Budget
}

// Defaults of Config, the same in every face.
const (
	DefaultMaxPreemptions  = 3
	DefaultReborrowBackoff = 10 * time.Minute
)

// maxPreemptions is Config.MaxPreemptions with its default; 0: no bound.
func (c Config) maxPreemptions() int {
	switch {
	case c.MaxPreemptions == 0:
		return DefaultMaxPreemptions
	case c.MaxPreemptions < 0:
		return 0
	}
	return c.MaxPreemptions
}

// noBorrowUntil is when a unit stopped now to give quota back, after
// preemptions earlier stops, may borrow again.
func (c Config) noBorrowUntil(now time.Time, preemptions int) time.Time {
	backoff := c.ReborrowBackoff
	switch {
	case backoff == 0:
		backoff = DefaultReborrowBackoff
	case backoff < 0:
		return time.Time{}
	}
	return now.Add(backoff << min(preemptions, 20))
}

// DefaultReclaimPatience is how long a unit within its queue's quota
// waits for room to appear by itself before it stops borrowers of equal
// or higher priority to take back what its queue lent, in every face.
const DefaultReclaimPatience = time.Hour

// Patience is a face's reclaim patience setting as Config takes it: 0 is
// DefaultReclaimPatience, a negative setting reclaims at once.
func Patience(setting time.Duration) time.Duration {
	switch {
	case setting == 0:
		return DefaultReclaimPatience
	case setting < 0:
		return 0
	}
	return setting
}

// DefaultAttempts is the default bound on placements tried in a cycle.
const DefaultAttempts = 1000

// Decisions is what one cycle decided, in the order it decided it.
type Decisions struct {
	Starts       []Start
	Preempts     []Preempt
	Reservations []Reservation
	Waiting      []Wait
	// GiveBacks are parts elastic running units grew by, taken back so
	// that the first unit waiting for room starts now (its Start comes
	// last in Starts), and Grows what elastic units add when no unit
	// waits (elastic.go). The State no longer holds the parts given back
	// and holds the parts grown, under the Grow job's name.
	GiveBacks []GiveBack
	Grows     []Grow
}

// GiveBack is a part an elastic running unit grew by and gives back now,
// as it was placed, so that the unit For starts.
type GiveBack struct {
	Unit      string
	Part      string
	For       string
	Placement *gang.Placement
}

// Grow is a part a running elastic unit adds now, placed under the name
// of its Running.Grow job.
type Grow struct {
	Unit      string
	Placement *gang.Placement
}

// Start is a unit to start now, where its placement says.
type Start struct {
	Unit      *Unit
	Placement *gang.Placement
	Admission queue.Admission // what its queue was charged, loans included
	Backfill  bool            // it starts ahead of a reserved unit, without delaying it
}

// ReclaimWait is, for a unit held by quota its queue lent to its cohort,
// the queues of the cohort that borrow now and when the core may take the
// quota back from them: At, once the unit has waited
// Config.ReclaimPatience (before it, only borrowers of lower priority,
// with Config.Preemption); zero when the patience has run out, and what
// stops now, if anything, is in the wait's reason.
type ReclaimWait struct {
	Cohort    string
	Borrowers []string
	At        time.Time
}

// Preempt is a running unit to stop so that another can start.
type Preempt struct {
	Victim  string
	For     string        // the unit it makes room for
	Reclaim bool          // it takes back quota lent to its queue, not room of lower priority
	Grace   time.Duration // how long it has to checkpoint and exit (Config.Grace)
	// NoBorrowUntil, for a reclaim, is when the victim may borrow quota
	// again once requeued (Unit.NoBorrowUntil; Config.ReborrowBackoff).
	NoBorrowUntil time.Time
	// Move: it is moved out of the way of a larger unit (Config.Defrag),
	// and should be queued again at once to restart elsewhere.
	Move bool
}

// Reservation is room held for a waiting unit: it starts once the listed
// running units have ended, estimated at At (zero: unknown).
type Reservation struct {
	Unit      string
	At        time.Time
	Releasing []string
	Quota     bool // it waits for quota too, and the room it names is where its queue admits it
}

// Wait says why a unit did not start.
type Wait struct {
	Unit   string
	Code   Code
	Reason string
	// Estimate is when it is expected to start, zero when unknown. Held
	// says the unit holds a reservation for it, which later units may not
	// delay; an estimate not held (Config.Estimates) assumes that nothing
	// ahead of the unit takes the room it needs.
	Estimate time.Time
	Held     bool
	// Quota is the ledger's refusal, for CodeQuota, and Reclaim, when
	// the unit stays within its queue's own quota and cohort peers borrow
	// it, who borrows and when the core takes it back.
	Quota   *queue.QuotaError
	Reclaim *ReclaimWait
	// Budget is the numbers of the budget that holds it, for CodeBudget.
	Budget *BudgetWait
	// Defrag is, for a unit that waits for units moved out of its way
	// (Config.Defrag), what it gains and what they lose.
	Defrag *DefragWait
	// Unfit is why it did not fit when the cycle tried to place it: the
	// core's reasons as codes with node counts, which a face words its
	// own way (nil when it was not tried, or under Config.Terse). Cause
	// is the words of why it does not fit (Unfit's, or Unit.Blocked),
	// and Then what the cycle does about it (a reservation, preemption);
	// Reason is Cause, then "; " and Then when there is one. A quota wait
	// has them too (Cause the ledger's refusal, Then what the cycle does
	// to make quota room); both are empty for a wait of another kind
	// (budget ...).
	Unfit *gang.Unfit
	Cause string
	Then  string
}

// Code classifies why a unit waits, so that a face can say whether more
// capacity would help (a cluster autoscaler reads only CodeCapacity as a
// shortage).
type Code int

// Why units wait.
const (
	CodeCapacity      Code = iota // the fleet has no room now; freeing or adding capacity helps
	CodeQuota                     // its queue has no quota left now
	CodeReserved                  // it fits, but would delay a reserved unit
	CodePreempting                // running units are stopping to make room for it
	CodeBlocked                   // the face says it cannot start (Unit.Blocked)
	CodeNeverFits                 // the fleet could not hold it even empty
	CodeNotConsidered             // the cycle's attempts ran out before it
	CodeInvalid                   // the job is malformed or names what the fleet lacks
	CodeBudget                    // its account's budget for the period would be overrun
)

var codeNames = [...]string{"capacity", "quota", "reserved", "preempting", "blocked", "never-fits", "not-considered", "invalid", "budget"}

func (c Code) String() string { return codeNames[c] }

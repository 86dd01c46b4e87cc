package sched

// The reservations a cycle ended with, remembered for the next: which
// units held one (the heads), how many running units each one's room
// released (Unit.ReserveHint), and each reservation of room (Unit.Kept),
// valid only while the face's core state is as it was when its cycle
// ended. None of it changes a decision: it saves the next cycle's
// reservation search, so it is never persisted (Changes leaves it out)
// and a Restore starts it afresh.
type reservationMemo struct {
	heads   map[string]bool
	hints   map[string]int
	kept    map[string]*Reservation
	settled Settled
	// grew: the last cycle tried to grow every elastic unit that runs
	// (no unit waited, started or took grown parts back).
	grew bool
	// retry are the units whose last wait may end with nothing released
	// (Retry).
	retry map[string]bool
}

// Settled is what a face's core state was when its cycle ended: the
// state's version (gang.State.Version, which counts placements and
// releases) and how often node health changed.
type Settled struct {
	Version       uint64
	HealthChanges int
}

// Reserved records the reservations of one cycle's decisions: they
// replace those of the cycle before.
func (m *Memory) Reserved(d Decisions) {
	r := &m.resv
	if r.heads == nil {
		r.heads, r.hints, r.kept = map[string]bool{}, map[string]int{}, map[string]*Reservation{}
	}
	clear(r.heads)
	clear(r.kept)
	if r.retry == nil {
		r.retry = map[string]bool{}
	}
	clear(r.retry)
	for _, w := range d.Waiting {
		if retries(w) {
			r.retry[w.Unit] = true
		}
	}
	r.grew = len(d.Waiting) == 0 && len(d.GiveBacks) == 0 && len(d.Starts) == 0
	for i := range d.Reservations {
		res := d.Reservations[i]
		r.heads[res.Unit] = true
		r.hints[res.Unit] = len(res.Releasing)
		if !res.Quota {
			r.kept[res.Unit] = &res
		}
	}
	if len(r.hints) > 4*len(r.heads)+64 {
		clear(r.hints) // heads that started or left the front
	}
}

// Settle records the face's core state at the end of its cycle; the
// reservations of room Reserved recorded hold for the next cycle only if
// it finds the state as it is now.
func (m *Memory) Settle(s Settled) { m.resv.settled = s }

// Head reports whether the unit held a reservation after the last cycle.
func (m *Memory) Head(unit string) bool { return m.resv.heads[unit] }

// ReserveHint is Unit.ReserveHint for the unit: how many running units
// its reservation released in the last cycle that gave it one.
func (m *Memory) ReserveHint(unit string) int { return m.resv.hints[unit] }

// Kept is Unit.Kept for the unit: its reservation of room after the last
// cycle when the face's core state is now as Settle recorded it, else
// nil.
func (m *Memory) Kept(unit string, now Settled) *Reservation {
	if now != m.resv.settled {
		return nil
	}
	return m.resv.kept[unit]
}

// GrowKept is Snapshot.GrowKept: the last cycle tried to grow every
// elastic unit that runs now (it started none) and the face's core state
// is now as Settle recorded it.
func (m *Memory) GrowKept(now Settled) bool { return m.resv.grew && now == m.resv.settled }

// Retry reports whether the unit's wait in the last cycle says nothing
// of the room or quota it would find: it was not tried (the cycle's
// attempts ran out), or its face held it (Unit.Blocked). A face that
// leaves out of a cycle the units that could not start then (the
// simulator, while nothing has ended since) must still hand it these. A
// wait that ends with time (a reborrow back-off, a budget's period, the
// reclaim patience) is the face's to wake at that time.
func (m *Memory) Retry(unit string) bool { return m.resv.retry[unit] }

// retries is Retry's rule for one wait.
func retries(w Wait) bool { return w.Code == CodeNotConsidered || w.Code == CodeBlocked }

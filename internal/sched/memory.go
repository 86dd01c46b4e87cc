package sched

import (
	"maps"
	"slices"
	"time"
)

// Remembered is what the scheduler keeps of one unit from one cycle to the
// next: how often it was stopped for other work (Running.Preemptions),
// until when it may not borrow quota again (Unit.NoBorrowUntil), and
// whether running work was stopped for it, so that the room freed is its
// own until it starts (Unit.Claimed).
type Remembered struct {
	Preemptions   int       `json:"preemptions,omitempty"`
	NoBorrowUntil time.Time `json:"noBorrowUntil,omitzero"`
	Claimed       bool      `json:"claimed,omitempty"`
}

func (r Remembered) empty() bool { return r == Remembered{} }

// Memory is the scheduler's memory of units across cycles, by unit name.
// A face tells it what it carried out of a cycle's decisions (Preempted,
// Started) and which units are still there (Keep); it reads a unit's
// memory into the next cycle's Unit and Running (Of). What changed since
// the face last persisted it is in Changes, so that the memory outlives
// the process: the face writes it where it keeps state (the server's
// store; the API server for the Kubernetes face) and hands it back to
// Restore when it starts or takes over. Memory is not safe for
// concurrent use.
type Memory struct {
	units  map[string]Remembered
	dirty  map[string]bool // nil: changes are not tracked
	claims int             // units with Claimed set
	resv   reservationMemo // the last cycle's reservations (reservememo.go)
}

// NewMemory returns a memory that knows nothing and tracks its changes
// for a face to persist.
func NewMemory() *Memory {
	return &Memory{units: map[string]Remembered{}, dirty: map[string]bool{}}
}

// NewVolatileMemory returns a memory that knows nothing and tracks no
// changes, for a face that keeps nothing past its process (the
// simulator); Changes is then always empty.
func NewVolatileMemory() *Memory {
	return &Memory{units: map[string]Remembered{}}
}

// Restore replaces what the memory knows with what was persisted; nothing
// is left to persist.
func (m *Memory) Restore(saved map[string]Remembered) {
	m.units, m.claims, m.resv = map[string]Remembered{}, 0, reservationMemo{}
	for name, r := range saved {
		if !r.empty() {
			m.units[name] = r
		}
		if r.Claimed {
			m.claims++
		}
	}
	if m.dirty != nil {
		m.dirty = map[string]bool{}
	}
}

// Of is what the memory holds of the named unit.
func (m *Memory) Of(name string) Remembered { return m.units[name] }

// Len is the number of units remembered.
func (m *Memory) Len() int { return len(m.units) }

// Claims is the number of units holding a claim.
func (m *Memory) Claims() int { return m.claims }

// Preempted records a preemption carried out for unit forUnit: each victim
// was stopped once more and may not borrow until its time (zero: no new
// bound; a back-off already running is never shortened), and forUnit
// holds a claim on the room until it starts.
func (m *Memory) Preempted(forUnit string, victims map[string]time.Time) {
	for name, until := range victims {
		r := m.units[name]
		r.Preemptions++
		if until.After(r.NoBorrowUntil) {
			r.NoBorrowUntil = until
		}
		m.set(name, r)
	}
	r := m.units[forUnit]
	r.Claimed = true
	m.set(forUnit, r)
}

// Started drops the claims of units that started.
func (m *Memory) Started(names ...string) {
	for _, name := range names {
		if r, ok := m.units[name]; ok && r.Claimed {
			r.Claimed = false
			m.set(name, r)
		}
	}
}

// Keep forgets the units for which present is false, but for their
// back-off while it lasts: work stopped to give quota back is often
// submitted again under its old name (a controller recreating the pods
// of a group, or a pod of a StatefulSet), and must not borrow again at
// once. A claim ends with its unit.
func (m *Memory) Keep(now time.Time, present func(name string) bool) {
	for name, r := range m.units {
		if present(name) {
			continue
		}
		if r.NoBorrowUntil.After(now) {
			r.Claimed = false
			m.set(name, r)
			continue
		}
		m.set(name, Remembered{})
	}
}

// Forget drops what the memory holds of a unit that will not come back
// (finished).
func (m *Memory) Forget(name string) {
	if _, ok := m.units[name]; ok {
		m.set(name, Remembered{})
	}
}

// Snapshot is a copy of everything remembered, by unit name.
func (m *Memory) Snapshot() map[string]Remembered { return maps.Clone(m.units) }

// Change is one unit's memory to persist; Gone says to delete it.
type Change struct {
	Unit       string
	Remembered Remembered
	Gone       bool
}

// Changes returns what changed since the last call, by unit name, and
// considers it persisted; a face whose write failed hands it to Unsaved.
func (m *Memory) Changes() []Change {
	if m.dirty == nil {
		return nil
	}
	names := slices.Sorted(maps.Keys(m.dirty))
	out := make([]Change, 0, len(names))
	for _, name := range names {
		r, ok := m.units[name]
		out = append(out, Change{Unit: name, Remembered: r, Gone: !ok})
	}
	clear(m.dirty)
	return out
}

// Unsaved marks changes as not persisted, so that the next Changes
// returns their units again with what the memory then holds.
func (m *Memory) Unsaved(changes []Change) {
	if m.dirty == nil {
		return
	}
	for _, c := range changes {
		m.dirty[c.Unit] = true
	}
}

// set stores r for the unit (nothing when r is empty), keeping the
// count of claims and the changes.
func (m *Memory) set(name string, r Remembered) {
	old, had := m.units[name]
	if old == r && (had || r.empty()) {
		return
	}
	if old.Claimed {
		m.claims--
	}
	if r.Claimed {
		m.claims++
	}
	if r.empty() {
		delete(m.units, name)
	} else {
		m.units[name] = r
	}
	if m.dirty != nil {
		m.dirty[name] = true
	}
}

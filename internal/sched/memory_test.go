package sched

import (
	"reflect"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/queue"
)

// A preemption counts once per victim, sets its back-off and claims the
// room for the unit it was made for; starting drops the claim; a unit gone
// is forgotten; Changes says each of these once, deletions included.
func TestMemoryRecordsWhatTheFaceCarriedOut(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewMemory()
	m.Preempted("big", map[string]time.Time{"small": at, "tiny": {}})
	m.Preempted("big", map[string]time.Time{"small": at.Add(time.Hour)})
	if got, want := m.Of("small"), (Remembered{Preemptions: 2, NoBorrowUntil: at.Add(time.Hour)}); got != want {
		t.Errorf("small: %+v, want %+v", got, want)
	}
	if got := m.Of("big"); !got.Claimed {
		t.Errorf("big: %+v, want its claim", got)
	}
	want := []Change{
		{Unit: "big", Remembered: Remembered{Claimed: true}},
		{Unit: "small", Remembered: Remembered{Preemptions: 2, NoBorrowUntil: at.Add(time.Hour)}},
		{Unit: "tiny", Remembered: Remembered{Preemptions: 1}},
	}
	if got := m.Changes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("changes %+v, want %+v", got, want)
	}
	if got := m.Changes(); len(got) != 0 {
		t.Fatalf("changes again %+v, want none", got)
	}
	m.Started("big", "never-seen")
	m.Keep(at, func(name string) bool { return name != "tiny" && name != "small" }) // small is gone, in its back-off
	want = []Change{{Unit: "big", Gone: true}, {Unit: "tiny", Gone: true}}
	if got := m.Changes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after start and keep: changes %+v, want %+v", got, want)
	}
	if m.Len() != 1 {
		t.Errorf("remembers %v, want small alone", m.Snapshot())
	}
	m.Keep(at.Add(time.Hour), func(string) bool { return false })
	if m.Len() != 0 {
		t.Errorf("remembers %v after small's back-off, want nothing", m.Snapshot())
	}
}

// What was persisted comes back whole, and a failed write is returned by
// the next Changes with the memory's current value.
func TestMemoryRestoreAndUnsaved(t *testing.T) {
	m := NewMemory()
	m.Preempted("x", map[string]time.Time{"y": {}})
	saved := m.Snapshot()
	lost := m.Changes()
	m.Preempted("x", map[string]time.Time{"y": {}})
	m.Unsaved(lost)
	if got := m.Changes(); len(got) != 2 || got[1].Remembered.Preemptions != 2 {
		t.Errorf("changes after a failed write %+v, want x and y (2 preemptions)", got)
	}
	other := NewMemory()
	other.Restore(saved)
	if got := other.Of("y"); got.Preemptions != 1 || len(other.Changes()) != 0 {
		t.Errorf("restored y %+v with changes, want 1 preemption and nothing to write", got)
	}
}

// Claims counts the units holding one; a priority preemption (no new
// bound) leaves a running back-off as it was; a volatile memory tracks no
// changes.
func TestMemoryClaimsBackOffAndVolatile(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewVolatileMemory()
	m.Preempted("a", map[string]time.Time{"v": at})
	m.Preempted("b", map[string]time.Time{"v": {}})
	if m.Claims() != 2 || m.Of("v") != (Remembered{Preemptions: 2, NoBorrowUntil: at}) {
		t.Errorf("claims %d, v %+v; want 2 claims, v stopped twice and backing off until %v", m.Claims(), m.Of("v"), at)
	}
	m.Started("a")
	m.Forget("b")
	if m.Claims() != 0 || m.Len() != 1 || len(m.Changes()) != 0 {
		t.Errorf("after a started and b went: claims %d, %v remembered, changes %v", m.Claims(), m.Snapshot(), m.Changes())
	}
}

// The reservations a cycle ends with are remembered for the next: heads,
// hints and the room kept while the face's state is as it settled; a
// Restore and Changes know nothing of them.
func TestMemoryKeepsTheLastReservations(t *testing.T) {
	m := NewMemory()
	room := Reservation{Unit: "big", Releasing: []string{"a", "b"}}
	quota := Reservation{Unit: "borrower", Releasing: []string{"c"}, Quota: true}
	m.Reserved(Decisions{Reservations: []Reservation{room, quota}})
	m.Settle(Settled{Version: 7, HealthChanges: 1})
	if !m.Head("big") || !m.Head("borrower") || m.Head("small") {
		t.Errorf("heads: big %v, borrower %v, small %v; want the two reserved", m.Head("big"), m.Head("borrower"), m.Head("small"))
	}
	if m.ReserveHint("big") != 2 || m.ReserveHint("borrower") != 1 {
		t.Errorf("hints %d and %d; want 2 and 1", m.ReserveHint("big"), m.ReserveHint("borrower"))
	}
	if k := m.Kept("big", Settled{Version: 7, HealthChanges: 1}); k == nil || k.Unit != "big" {
		t.Errorf("kept %+v; want big's room while nothing changed", k)
	}
	if m.Kept("borrower", Settled{Version: 7, HealthChanges: 1}) != nil {
		t.Error("a reservation that waits for quota is kept; want only reservations of room")
	}
	for _, changed := range []Settled{{Version: 8, HealthChanges: 1}, {Version: 7, HealthChanges: 2}} {
		if m.Kept("big", changed) != nil {
			t.Errorf("kept with the state at %+v; want nil once anything was placed or a node's health changed", changed)
		}
	}
	if len(m.Changes()) != 0 {
		t.Error("reservations are in Changes; they are never persisted")
	}
	m.Reserved(Decisions{})
	if m.Head("big") || m.ReserveHint("big") != 2 {
		t.Errorf("after a cycle without reservations: head %v, hint %d; want no head, the hint kept", m.Head("big"), m.ReserveHint("big"))
	}
	m.Restore(nil)
	if m.ReserveHint("big") != 0 || m.Kept("big", Settled{}) != nil {
		t.Error("a restored memory remembers reservations; want it afresh")
	}
}

// The units the last cycle did not try, or whose face held them, are to
// be handed to the next cycle even when nothing was released; those it
// found no room or quota for are not, nor those that wait out a time
// (their face wakes them then).
func TestMemoryRetriesWaitsThatMayEndByThemselves(t *testing.T) {
	m := NewVolatileMemory()
	m.Reserved(Decisions{Waiting: []Wait{
		{Unit: "untried", Code: CodeNotConsidered},
		{Unit: "held", Code: CodeBlocked},
		{Unit: "backoff", Code: CodeQuota}, // no ledger refusal: a back-off
		{Unit: "budget", Code: CodeBudget},
		{Unit: "room", Code: CodeCapacity},
		{Unit: "quota", Code: CodeQuota, Quota: &queue.QuotaError{}},
		{Unit: "never", Code: CodeNeverFits},
	}})
	for unit, want := range map[string]bool{"untried": true, "held": true, "backoff": false, "budget": false, "room": false, "quota": false, "never": false, "absent": false} {
		if got := m.Retry(unit); got != want {
			t.Errorf("Retry(%s) = %v, want %v", unit, got, want)
		}
	}
	m.Reserved(Decisions{})
	if m.Retry("untried") {
		t.Error("a unit not in the last cycle's waits is still retried")
	}
}

package sim

import (
	"container/heap"
	"time"
)

// event is something that happens at a moment: an arrival (index into the
// workload's arrivals), a completion (a running job's name and the run it
// ends: a job interrupted and restarted has a later run), a fault (index
// into the workload's faults) or a spot node coming back.
type event struct {
	at      time.Duration
	seq     int // order among events at the same moment
	arrival int // -1 unless an arrival
	job     string
	run     int
	fault   int    // -1 unless a fault; the index is fault+1 to keep 0 meaning none
	back    string // a spot node that comes back after its notice
	wake    string // a pending job whose patience ran out: try it again
	// provisioned: an autoscaled node joins, for forJob; idle: check
	// whether an autoscaled node stayed empty long enough to go.
	provisioned string
	forJob      *pendingJob
	idle        string
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

func (s *Sim) schedule(e event) {
	e.seq = s.seq
	s.seq++
	heap.Push(&s.events, e)
}

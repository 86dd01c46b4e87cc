package sched

// Struck is a running unit with tasks on a node that failed or gave notice
// that it goes, as a face saw it.
type Struck struct {
	Tasks   int  // the tasks the unit runs now
	Notice  bool // the node gave notice (a spot reclaim, a drain): it has time to checkpoint
	Requeue bool // the unit asked to be stopped whole and queued again when a node under it fails
}

// MovesOff is the one rule every face follows when a node under a running
// unit goes: true when the core moves the unit's tasks on that node to a
// spare or free node next to the rest (gang.State.Replace, which keeps the
// unit's required topology and says when nothing can take them); false,
// with why, when the unit stops whole and queues again at the front.
//
// A gang of two tasks or more moves when its node failed without notice
// and it did not ask otherwise: the rest of it keeps running, and all of
// it resumes from its last checkpoint. A single task gains nothing from a
// move that the queue does not give it (its next placement may take any
// node), and work given notice checkpoints and stops whole.
func MovesOff(s Struck) (bool, string) {
	switch {
	case s.Requeue:
		return false, "it asks to be requeued whole when a node fails"
	case s.Notice:
		return false, "its node gave notice: it checkpoints and is requeued whole"
	case s.Tasks < 2:
		return false, "a single task is requeued and placed anew"
	}
	return true, ""
}

package gang

import (
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/placement"
)

// journal records node states, and what the store says is left on them,
// before a placement touches them, so that a
// gang that turns out not to fit is undone completely. Savepoints nest:
// rolling back one restores only what changed since it was opened; a
// committed savepoint's records stay with its parent.
//
// A what-if opens and rolls back a savepoint for every question it asks,
// so the journal allocates nothing in the steady state: the per-GPU slices
// of discarded records are kept for the next ones (recycled), and which nodes
// an open savepoint has saved is a stamp per node rather than a set. A
// node that is not in MIG mode saves two flat slices (whole, left).
type journal struct {
	entries []saved
	marks   []int // start of each open savepoint in entries
	// serials holds each open savepoint's serial; savedIn[n] the serial
	// of the savepoint that last saved node n. Serials are never reused,
	// so a stamp left by a closed savepoint never matches an open one.
	serials []uint64
	savedIn []uint64
	serial  uint64
	wholes  recycled[bool]
	layouts recycled[gpu.Layout]
	lefts   recycled[int64]
}

type saved struct {
	node  int
	state nodeState
	left  placement.NodeLeft
}

// touch saves node n before its first change in the innermost savepoint.
// Outside any savepoint changes are permanent and nothing is saved.
func (s *State) touch(n int) {
	j := &s.journal
	top := len(j.marks) - 1
	if top < 0 {
		s.version++ // a change outside any savepoint is kept at once
		return
	}
	if top == 0 && s.trial.open {
		s.version++ // kept until the trial is undone
	}
	if j.savedIn == nil {
		j.savedIn = make([]uint64, len(s.nodes))
	}
	if j.savedIn[n] == j.serials[top] {
		return
	}
	j.savedIn[n] = j.serials[top]
	j.entries = append(j.entries, saved{node: n, state: j.clone(&s.nodes[n]), left: s.left.SaveNode(n, j.lefts.get())})
}

// savepoint opens a nested level of undo.
func (s *State) savepoint() {
	j := &s.journal
	j.serial++
	j.marks = append(j.marks, len(j.entries))
	j.serials = append(j.serials, j.serial)
}

// rollback restores every node changed since the innermost savepoint and
// closes it.
func (s *State) rollback() {
	j := &s.journal
	top := len(j.marks) - 1
	for i := len(j.entries) - 1; i >= j.marks[top]; i-- {
		e := &j.entries[i]
		n, now := e.node, &s.nodes[e.node]
		j.recycle(now)
		e.state.sum = now.sum // the index is brought up to date below
		*now = e.state
		s.left.RestoreNode(n, e.left)
		j.lefts.put(e.left.GPU)
		*e = saved{}
		s.reindex(n)
	}
	j.entries = j.entries[:j.marks[top]]
	j.close(top)
}

// commit closes the innermost savepoint and keeps its changes.
func (s *State) commit() {
	j := &s.journal
	top := len(j.marks) - 1
	changed := len(j.entries) > j.marks[top]
	j.close(top)
	if changed && (top == 0 || top == 1 && s.trial.open) {
		s.version++
	}
	if top == 0 {
		for i := range j.entries {
			e := &j.entries[i]
			j.recycle(&e.state)
			j.lefts.put(e.left.GPU)
			*e = saved{}
		}
		j.entries = j.entries[:0]
	}
}

// close forgets savepoint top, the innermost.
func (j *journal) close(top int) {
	j.marks, j.serials = j.marks[:top], j.serials[:top]
}

// clone copies ns into slices the journal kept for reuse when it has any.
func (j *journal) clone(ns *nodeState) nodeState {
	c := *ns
	c.whole = append(j.wholes.get(), ns.whole...)
	if ns.layouts != nil {
		c.layouts = cloneLayouts(j.layouts.get(), ns.layouts)
	}
	return c
}

// recycle keeps ns's per-GPU slices for reuse; ns must not be read again.
func (j *journal) recycle(ns *nodeState) {
	j.wholes.put(ns.whole)
	j.layouts.put(ns.layouts)
}

// cloneLayouts copies src into dst, reusing dst's memory (and its
// instances') where it is large enough.
func cloneLayouts(dst, src []gpu.Layout) []gpu.Layout {
	if cap(dst) < len(src) {
		dst = make([]gpu.Layout, len(src))
	}
	dst = dst[:len(src)]
	for i, l := range src {
		instances := dst[i].Instances[:0]
		dst[i] = l
		if l.Model != nil {
			dst[i].Instances = append(instances, l.Instances...)
		}
	}
	return dst
}

// recycled keeps slices that no node or record holds, for reuse.
type recycled[T any] struct{ free [][]T }

// get returns an empty slice, with the memory of one kept when there is one.
func (p *recycled[T]) get() []T {
	k := len(p.free)
	if k == 0 {
		return nil
	}
	b := p.free[k-1]
	p.free = p.free[:k-1]
	return b[:0]
}

// put keeps b for reuse.
func (p *recycled[T]) put(b []T) {
	if cap(b) > 0 {
		p.free = append(p.free, b)
	}
}

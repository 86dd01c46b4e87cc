package gang

import "github.com/corral-sched/corral/internal/placement"

// journal records node states, and what the store says is left on them,
// before a placement touches them, so that a
// gang that turns out not to fit is undone completely. Savepoints nest:
// rolling back one restores only what changed since it was opened; a
// committed savepoint's records stay with its parent.
//
// A what-if opens and rolls back a savepoint for every question it asks,
// so the journal allocates nothing in the steady state: the GPU states of
// discarded records are kept for the next ones (free), and which nodes an
// open savepoint has saved is a stamp per node rather than a set.
type journal struct {
	entries []saved
	marks   []int // start of each open savepoint in entries
	// serials holds each open savepoint's serial; savedIn[n] the serial
	// of the savepoint that last saved node n. Serials are never reused,
	// so a stamp left by a closed savepoint never matches an open one.
	serials  []uint64
	savedIn  []uint64
	serial   uint64
	free     [][]gpuState // GPU states no node or record holds, for reuse
	freeLeft [][]int64    // the same for the GPUs' milli left
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
	j.entries = append(j.entries, saved{node: n, state: j.clone(&s.nodes[n]), left: s.left.SaveNode(n, j.leftBuf())})
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
		indexed, changed := s.nodes[e.node].sum, s.nodes[e.node].gpus
		s.nodes[e.node] = e.state
		s.nodes[e.node].sum = indexed
		s.left.RestoreNode(e.node, e.left)
		j.free = append(j.free, changed)
		j.freeLeft = append(j.freeLeft, e.left.GPU)
		e.state.gpus, e.left.GPU = nil, nil
		s.reindex(e.node)
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
			j.free = append(j.free, e.state.gpus)
			j.freeLeft = append(j.freeLeft, e.left.GPU)
			e.state.gpus, e.left.GPU = nil, nil
		}
		j.entries = j.entries[:0]
	}
}

// close forgets savepoint top, the innermost.
func (j *journal) close(top int) {
	j.marks, j.serials = j.marks[:top], j.serials[:top]
}

// leftBuf is memory for a node's GPUs' milli left that the journal kept
// for reuse, or nil.
func (j *journal) leftBuf() []int64 {
	k := len(j.freeLeft)
	if k == 0 {
		return nil
	}
	buf := j.freeLeft[k-1]
	j.freeLeft = j.freeLeft[:k-1]
	return buf
}

// clone copies ns, its GPU states into ones the journal kept for reuse
// when it has any.
func (j *journal) clone(ns *nodeState) nodeState {
	var buf []gpuState
	if k := len(j.free); k > 0 {
		buf, j.free = j.free[k-1], j.free[:k-1]
	}
	c := *ns
	c.gpus = cloneGPUs(buf, ns.gpus)
	return c
}

// cloneGPUs copies src into dst, reusing dst's memory (and its layouts')
// where it is large enough.
func cloneGPUs(dst, src []gpuState) []gpuState {
	if cap(dst) < len(src) {
		dst = make([]gpuState, len(src))
	}
	dst = dst[:len(src)]
	for i, g := range src {
		instances := dst[i].layout.Instances[:0]
		dst[i] = g
		if g.layout.Model != nil {
			dst[i].layout.Instances = append(instances, g.layout.Instances...)
		}
	}
	return dst
}

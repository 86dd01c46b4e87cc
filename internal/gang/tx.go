package gang

// journal records node states before a placement touches them, so that a
// gang that turns out not to fit is undone completely. Savepoints nest:
// rolling back one restores only what changed since it was opened; a
// committed savepoint's records stay with its parent.
type journal struct {
	entries []saved
	marks   []int          // start of each open savepoint in entries
	seen    []map[int]bool // nodes saved in each open savepoint
}

type saved struct {
	node  int
	state nodeState
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
	if j.seen[top][n] {
		return
	}
	j.seen[top][n] = true
	j.entries = append(j.entries, saved{node: n, state: s.nodes[n].clone()})
}

// savepoint opens a nested level of undo.
func (s *State) savepoint() {
	j := &s.journal
	j.marks = append(j.marks, len(j.entries))
	j.seen = append(j.seen, map[int]bool{})
}

// rollback restores every node changed since the innermost savepoint and
// closes it.
func (s *State) rollback() {
	j := &s.journal
	top := len(j.marks) - 1
	for i := len(j.entries) - 1; i >= j.marks[top]; i-- {
		e := j.entries[i]
		indexed := s.nodes[e.node].sum
		s.nodes[e.node] = e.state
		s.nodes[e.node].sum = indexed
		s.reindex(e.node)
	}
	j.entries = j.entries[:j.marks[top]]
	j.marks, j.seen = j.marks[:top], j.seen[:top]
}

// commit closes the innermost savepoint and keeps its changes.
func (s *State) commit() {
	j := &s.journal
	top := len(j.marks) - 1
	changed := len(j.entries) > j.marks[top]
	j.marks, j.seen = j.marks[:top], j.seen[:top]
	if changed && (top == 0 || top == 1 && s.trial.open) {
		s.version++
	}
	if top == 0 {
		j.entries = j.entries[:0]
	}
}

func (ns nodeState) clone() nodeState {
	c := ns
	c.gpus = make([]gpuState, len(ns.gpus))
	for i, g := range ns.gpus {
		c.gpus[i] = g
		if g.layout.Model != nil {
			c.gpus[i].layout = g.layout.Clone()
		}
	}
	return c
}

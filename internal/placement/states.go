package placement

import (
	"encoding/binary"
)

// stateScores remembers corral's score of each (node state, pod class)
// for one mix. A node's state is what the score reads of it: its GPU
// model, the CPU left and the milli left on each GPU, in order. Nodes in
// one state score alike, GPU choice included, and a fleet has far fewer
// states than nodes (empty nodes of one type, full ones, those filled
// alike), so a new mix is scored once per state, not once per node. A
// state no node is in any more is dropped, so the states kept are never
// more than the nodes.
type stateScores struct {
	podClasses
	ids    map[string]int32 // a state's key -> its id
	of     []int32          // per node: its state's id, valid while ofGen is its generation + 1
	ofGen  []uint32
	states []scoredState
	free   []int32 // ids of dropped states, to use again
	epoch  uint32  // the mix's: entries of an older one are stale
	key    []byte  // scratch
}

// scoredState is what is kept of one state: how many nodes are in it,
// its fragmentation as it is (valid while beforeEpoch is the mix's), and
// per pod class the score (valid while its gen is the mix's epoch).
type scoredState struct {
	key         string
	nodes       int
	before      float64
	beforeEpoch uint32
	entries     []cached
}

// forget makes every score stale, as when the mix changes; classes and
// states stay.
func (s *stateScores) forget() { s.epoch++ }

// state is the state node n is in now.
func (s *stateScores) state(c *Cluster, n int) *scoredState {
	if len(s.of) != len(c.Nodes) {
		s.of, s.ofGen = make([]int32, len(c.Nodes)), make([]uint32, len(c.Nodes))
		s.ids, s.states, s.free = map[string]int32{}, nil, nil
		s.epoch++
	}
	gen := c.Generation(n) + 1
	if s.ofGen[n] == gen {
		return &s.states[s.of[n]]
	}
	s.key = append(s.key[:0], c.Nodes[n].Model...)
	s.key = binary.AppendVarint(append(s.key, 0), c.CPULeft[n])
	for _, l := range c.GPULeft[n] {
		s.key = binary.AppendVarint(s.key, l)
	}
	id, ok := s.ids[string(s.key)]
	if !ok {
		id = s.add(string(s.key))
	}
	s.states[id].nodes++
	if s.ofGen[n] != 0 {
		s.leave(s.of[n])
	}
	s.of[n], s.ofGen[n] = id, gen
	return &s.states[id]
}

// add keeps a new state, under an id of a dropped one where there is one.
func (s *stateScores) add(key string) int32 {
	var id int32
	if k := len(s.free); k > 0 {
		id, s.free = s.free[k-1], s.free[:k-1]
		s.states[id] = scoredState{key: key, entries: s.states[id].entries[:0]}
	} else {
		id = int32(len(s.states))
		s.states = append(s.states, scoredState{key: key})
	}
	s.ids[key] = id
	return id
}

// leave counts a node out of state id, dropping the state when it was
// the last.
func (s *stateScores) leave(id int32) {
	st := &s.states[id]
	if st.nodes--; st.nodes == 0 {
		delete(s.ids, st.key)
		s.free = append(s.free, id)
	}
}

// get returns the score of node n's state for class, computing it with
// compute (on node n) when the state has none for the mix. compute may be
// nil when the caller knows the entry is fresh.
func (s *stateScores) get(c *Cluster, n, class int, compute func() (float64, int)) cached {
	if e, ok := s.fresh(c, n, class); ok {
		return e
	}
	return s.fill(c, n, class, compute)
}

// fill is get for a score not kept for the mix: it computes it with
// compute and keeps it for node n's state.
func (s *stateScores) fill(c *Cluster, n, class int, compute func() (float64, int)) cached {
	st := s.state(c, n)
	if class >= len(st.entries) {
		st.entries = append(st.entries, make([]cached, class+1-len(st.entries))...)
	}
	if e := &st.entries[class]; e.gen != s.epoch {
		score, gpu := compute()
		*e = cached{gen: s.epoch, score: score, gpu: gpu}
	}
	return st.entries[class]
}

// fresh is the score of node n's state for class when it is kept for
// the mix: the lookup every feasible node takes for every pod, small
// enough to be inlined.
func (s *stateScores) fresh(c *Cluster, n, class int) (cached, bool) {
	if n < len(s.ofGen) && s.ofGen[n] == c.changes.gen[n]+1 {
		if es := s.states[s.of[n]].entries; class < len(es) && es[class].gen == s.epoch {
			return es[class], true
		}
	}
	return cached{}, false
}

// fragNow is node n's fragmentation as it is, computed with compute once
// per state and mix.
func (s *stateScores) fragNow(c *Cluster, n int, compute func() float64) float64 {
	st := s.state(c, n)
	if st.beforeEpoch != s.epoch {
		st.before, st.beforeEpoch = compute(), s.epoch
	}
	return st.before
}

// gpus is the GPU choice on node n: the scored GPU for a sharing pod (the
// entry must be fresh), the lowest-index free GPUs otherwise.
func (s *stateScores) gpus(c *Cluster, n, class int, pod *Pod) []int {
	if pod.IsShare() {
		return []int{s.get(c, n, class, nil).gpu}
	}
	return bestFitGPUs(c.GPULeft[n], pod)
}

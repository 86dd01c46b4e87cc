package gang

import "sort"

// shareMix is the mix of running shared tasks by size (thousandths of a
// GPU): the typical shared task against which the fragmentation of a
// shared GPU is measured, in the spirit of FGD (ATC'23) — free room on a
// GPU is a fragment for a task size when a task of that size cannot use it.
type shareMix struct {
	sizes  []int // ascending
	counts []int
	total  int
}

// add counts n more running tasks of a size (n < 0 removes them).
func (m *shareMix) add(size, n int) {
	i := sort.SearchInts(m.sizes, size)
	if i == len(m.sizes) || m.sizes[i] != size {
		m.sizes = append(m.sizes[:i], append([]int{size}, m.sizes[i:]...)...)
		m.counts = append(m.counts[:i], append([]int{0}, m.counts[i:]...)...)
	}
	m.counts[i] += n
	m.total += n
}

// frag is the expected part of a GPU with free room f (thousandths) that a
// typical task cannot use; with no running tasks the mix is the task being
// placed, of size self.
func (m *shareMix) frag(f, self int) float64 {
	if m.total == 0 {
		if f < self {
			return float64(f)
		}
		return 0
	}
	unusable := 0
	for i, size := range m.sizes {
		if f < size {
			unusable += m.counts[i]
		}
	}
	return float64(f) * float64(unusable) / float64(m.total)
}

// shareKey orders the GPUs a shared task of size size could go to: the
// least growth of fragmentation, then a GPU already shared before a fresh
// one, then the least room.
type shareKey struct {
	growth float64
	fresh  bool
	room   int
}

func (a shareKey) less(b shareKey) bool {
	if a.growth != b.growth {
		return a.growth < b.growth
	}
	if a.fresh != b.fresh {
		return !a.fresh
	}
	return a.room < b.room
}

// shareRoom reports whether GPU g of node n can take a share of m
// thousandths: it is not held whole and has that much left (a free GPU
// has all of itself left).
func (s *State) shareRoom(n, g, m int) bool {
	return !s.nodes[n].whole[g] && int(s.left.GPULeft[n][g]) >= m
}

// bestShareGPU returns node n's GPU that a shared task of size m fits on
// with the least key, or -1.
func (s *State) bestShareGPU(n, m int) (int, shareKey) {
	best, bestKey := -1, shareKey{}
	for g := range s.nodes[n].whole {
		if !s.shareRoom(n, g, m) {
			continue
		}
		room := int(s.left.GPULeft[n][g])
		k := shareKey{fresh: room == 1000, room: room}
		if !s.shareBestFit {
			k.growth = s.shares.frag(room-m, m) - s.shares.frag(room, m)
		}
		if best < 0 || k.less(bestKey) {
			best, bestKey = g, k
		}
	}
	return best, bestKey
}

// countShares adds (sign 1) or removes (sign -1) a placement's tasks on
// shared GPUs from the mix: a shared task by its size, a whole-GPU task on
// a node that shares GPUs as a task of a whole GPU, for which any partly
// used GPU is a fragment.
func (s *State) countShares(p *Placement, sign int) {
	for _, t := range p.Tasks {
		switch {
		case t.Milli > 0:
			s.shares.add(t.Milli, sign)
		case len(t.GPUs) > 0 && t.MIG == nil && s.classes[s.nodes[t.Node].class].shared:
			s.shares.add(1000, sign)
		}
	}
}

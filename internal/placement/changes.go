package placement

// changes names every node's contents with a generation and logs the nodes
// whose contents changed, for the readers that keep counts over all nodes
// (the guards) to catch up in O(changes) instead of scanning every node.
//
// A change gives the node a generation it never had; restoring a node
// gives back the generation of the contents restored. The log is written
// lazily, when read: a node is listed when its generation differs from the
// one it was last listed with, so a node changed and restored between two
// reads (a what-if) is not listed at all.
type changes struct {
	gen    []uint32 // per node: the generation of its contents
	next   []uint32 // per node: the last generation given, never given again
	listed []uint32 // per node: the generation it was last logged with
	dirty  []int    // nodes changed or restored since the log was last written
	marked []bool   // per node: in dirty

	base int // log position of log[0]
	log  []int
}

func newChanges(nodes int) changes {
	return changes{
		gen: make([]uint32, nodes), next: make([]uint32, nodes), listed: make([]uint32, nodes),
		marked: make([]bool, nodes),
	}
}

// changed gives node n a new generation.
func (ch *changes) changed(n int) {
	ch.next[n]++
	ch.gen[n] = ch.next[n]
	ch.mark(n)
}

// restored gives node n back generation gen, of contents it had before.
func (ch *changes) restored(n int, gen uint32) {
	ch.gen[n] = gen
	ch.mark(n)
}

func (ch *changes) mark(n int) {
	if !ch.marked[n] {
		ch.marked[n] = true
		ch.dirty = append(ch.dirty, n)
	}
}

// flush logs the marked nodes whose generation is not the one they were
// last logged with.
func (ch *changes) flush() {
	for _, n := range ch.dirty {
		ch.marked[n] = false
		if ch.gen[n] == ch.listed[n] {
			continue
		}
		ch.listed[n] = ch.gen[n]
		if len(ch.log) >= 2*len(ch.gen)+1024 {
			ch.base += len(ch.log)
			ch.log = ch.log[:0]
		}
		ch.log = append(ch.log, n)
	}
	ch.dirty = ch.dirty[:0]
}

// since returns the nodes logged from position pos on, the position to
// ask from next, and false when the log no longer reaches back to pos.
func (ch *changes) since(pos int) ([]int, int, bool) {
	ch.flush()
	end := ch.base + len(ch.log)
	if pos < ch.base {
		return nil, end, false
	}
	return ch.log[pos-ch.base:], end, true
}

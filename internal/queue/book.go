package queue

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Book is the ledger of quota: what every queue uses, who lends to whom,
// and every queue's decayed usage for fair sharing. Build one with NewBook;
// it is not safe for concurrent use.
type Book struct {
	queues   []*node // by name
	index    map[string]int
	groups   []group // lending groups (see Spec)
	halfLife time.Duration
	now      time.Duration
}

// group is a queue and its cohort peers: queues with one parent and one
// cohort name, or a queue with no cohort alone.
type group struct {
	members []int    // by name
	flavors []Flavor // in which some member has nominal quota: the only ones lent
}

type node struct {
	spec     Spec
	parent   int // -1 at the top level
	children []int
	group    int
	used     Amounts // admitted here, or the sum over the children
	decayed  float64 // GPU-seconds, see Advance
}

// Errors that Admit, CanAdmit, Release and Push wrap.
var (
	ErrUnknownQueue = errors.New("unknown queue")
	ErrNotLeaf      = errors.New("queue has child queues; jobs go to leaf queues")
	ErrNoQuota      = errors.New("not enough quota")
)

// QuotaError says why an admission does not fit: at queue Level (the
// admitting queue or one of its ancestors) flavor Flavor has room for Room
// milli-GPUs and the admission needs Need. Reclaimable is how much of
// Level's nominal quota cohort peers use now, which preempting them would
// give back. It wraps ErrNoQuota.
type QuotaError struct {
	Queue       string
	Level       string
	Flavor      Flavor
	Need, Room  int64
	Reclaimable int64
}

func (e *QuotaError) Error() string {
	at := ""
	if e.Level != e.Queue {
		at = fmt.Sprintf(" at parent queue %q", e.Level)
	}
	return fmt.Sprintf("queue %q: %v: need %s GPUs, room for %s%s (%s of its nominal lent out): %v",
		e.Queue, e.Flavor, MilliString(e.Need), MilliString(e.Room), at, MilliString(e.Reclaimable), ErrNoQuota)
}

func (e *QuotaError) Unwrap() error { return ErrNoQuota }

// NewBook builds a ledger for specs, with nothing admitted, at time 0.
// halfLife is the half-life of the usage decay for fair sharing; 0 means
// DefaultHalfLife. It reports everything wrong with the specs at once.
func NewBook(specs []Spec, halfLife time.Duration) (*Book, error) {
	err := validateSpecs(specs)
	if halfLife < 0 {
		err = errors.Join(err, fmt.Errorf("negative fair-share half-life %v", halfLife))
	}
	if err != nil {
		return nil, fmt.Errorf("queues: %w", err)
	}
	if halfLife == 0 {
		halfLife = DefaultHalfLife
	}
	b := &Book{index: make(map[string]int, len(specs)), halfLife: halfLife}
	sorted := slices.Clone(specs)
	slices.SortFunc(sorted, func(x, y Spec) int { return strings.Compare(x.Name, y.Name) })
	for i, s := range sorted {
		s.Nominal, s.BorrowingLimit, s.LendingLimit = s.Nominal.Clone(), cloneLimits(s.BorrowingLimit), cloneLimits(s.LendingLimit)
		b.queues = append(b.queues, &node{spec: s, parent: -1, used: Amounts{}})
		b.index[s.Name] = i
	}
	b.link()
	return b, nil
}

// cloneLimits copies a limit map keeping zero entries: a zero limit is a
// limit, a missing one is none.
func cloneLimits(a Amounts) Amounts {
	if a == nil {
		return nil
	}
	out := make(Amounts, len(a))
	for f, v := range a {
		out[f] = v
	}
	return out
}

// link sets parents, children and lending groups.
func (b *Book) link() {
	groups := map[string]int{}
	for i, n := range b.queues {
		if n.spec.Parent != "" {
			n.parent = b.index[n.spec.Parent]
			p := b.queues[n.parent]
			p.children = append(p.children, i)
		}
		key := n.spec.Parent + "\x00" + n.spec.Cohort
		g, ok := groups[key]
		if !ok || n.spec.Cohort == "" {
			g = len(b.groups)
			groups[key] = g
			b.groups = append(b.groups, group{})
		}
		b.groups[g].members = append(b.groups[g].members, i)
		n.group = g
	}
	for g := range b.groups {
		all := Amounts{}
		for _, m := range b.groups[g].members {
			all = all.Add(b.queues[m].spec.Nominal)
		}
		b.groups[g].flavors = all.Flavors()
	}
}

// Queues lists the queue names in order.
func (b *Book) Queues() []string {
	names := make([]string, len(b.queues))
	for i, n := range b.queues {
		names[i] = n.spec.Name
	}
	return names
}

// Spec is the spec of queue; false for an unknown queue.
func (b *Book) Spec(queue string) (Spec, bool) {
	i, ok := b.index[queue]
	if !ok {
		return Spec{}, false
	}
	return b.queues[i].spec, true
}

// Children lists the child queues of queue by name.
func (b *Book) Children(queue string) []string {
	i, ok := b.index[queue]
	if !ok {
		return nil
	}
	var names []string
	for _, c := range b.queues[i].children {
		names = append(names, b.queues[c].spec.Name)
	}
	return names
}

// Peers lists the queues queue lends to and borrows from, by name: the
// other queues with its parent and cohort.
func (b *Book) Peers(queue string) []string {
	i, ok := b.index[queue]
	if !ok {
		return nil
	}
	var names []string
	for _, m := range b.groups[b.queues[i].group].members {
		if m != i {
			names = append(names, b.queues[m].spec.Name)
		}
	}
	return names
}

// leaf finds a queue jobs may be admitted to.
func (b *Book) leaf(queue string) (int, error) {
	i, ok := b.index[queue]
	switch {
	case !ok:
		return 0, fmt.Errorf("queue %q: %w", queue, ErrUnknownQueue)
	case len(b.queues[i].children) > 0:
		return 0, fmt.Errorf("queue %q: %w", queue, ErrNotLeaf)
	}
	return i, nil
}

// path is i and its ancestors, i first.
func (b *Book) path(i int) []int {
	var p []int
	for ; i >= 0; i = b.queues[i].parent {
		p = append(p, i)
	}
	return p
}

// Usage is what queue uses now: admitted to it, or to the queues below it.
// An unknown queue uses nothing.
func (b *Book) Usage(queue string) Amounts {
	i, ok := b.index[queue]
	if !ok {
		return Amounts{}
	}
	return b.queues[i].used.Clone()
}

// Respec is a Book for specs at b's time, with nothing admitted, in which
// every queue b also has keeps its decayed usage: what changing the queues
// (a tenant created, a quota changed) leaves of fair-share history. A
// queue new to specs starts with none; a queue specs lacks is forgotten.
func (b *Book) Respec(specs []Spec) (*Book, error) {
	nb, err := NewBook(specs, b.halfLife)
	if err != nil {
		return nil, err
	}
	nb.now = b.now
	for i, n := range nb.queues {
		if j, ok := b.index[n.spec.Name]; ok {
			nb.queues[i].decayed = b.queues[j].decayed
		}
	}
	return nb, nil
}

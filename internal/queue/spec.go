package queue

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Order is how a queue orders its pending jobs. Ties are broken by arrival,
// then by job name, so every order is total.
type Order int

// Orders within a queue.
const (
	// FIFO: by arrival sequence number, earliest first; priority is ignored.
	FIFO Order = iota
	// PriorityFIFO: higher Job.Priority first, then by arrival. Priority
	// classes are plain Job.Priority values; there is no separate class
	// object.
	PriorityFIFO
	// ShortestFirst: shortest expected Job.Runtime first, jobs with an
	// unknown runtime (0) last, then by arrival; priority is ignored.
	ShortestFirst
)

var orderNames = [...]string{FIFO: "fifo", PriorityFIFO: "priority-fifo", ShortestFirst: "shortest-first"}

func (o Order) String() string {
	if o < 0 || int(o) >= len(orderNames) {
		return fmt.Sprintf("order(%d)", int(o))
	}
	return orderNames[o]
}

// ParseOrder reads an Order from its String form.
func ParseOrder(s string) (Order, error) {
	for i, n := range orderNames {
		if strings.EqualFold(s, n) {
			return Order(i), nil
		}
	}
	return 0, fmt.Errorf("unknown queue order %q, want one of %s", s, strings.Join(orderNames[:], ", "))
}

// Spec describes one queue.
//
// Quota is per flavor (Amounts). A queue's usage is what was admitted to
// it, and for a queue with children the sum of its children's usage: a
// child's usage counts against its parent's nominal too, so a child never
// uses more than its parent may. Jobs are admitted to and pending in leaf
// queues only. A parent with no nominal quota in a flavor lets its children
// use none of it, unless it borrows it from its own cohort.
//
// Queues with the same Parent that name the same Cohort lend each other
// their unused nominal quota; at the top level (Parent "") that is the
// usual cohort of queues, below it the cohort is among siblings. Cohort
// names are therefore scoped by the parent. A queue with no cohort never
// uses more than its nominal quota.
type Spec struct {
	Name   string
	Parent string // the enclosing queue; "" for a top-level queue
	Cohort string // "" for none
	// Nominal is the quota the queue is guaranteed, per flavor.
	Nominal Amounts
	// BorrowingLimit caps, per flavor, how much the queue may use beyond
	// its nominal quota. A flavor missing from the map (or a nil map) has
	// no cap beyond what the cohort has free.
	BorrowingLimit Amounts
	// LendingLimit caps, per flavor, how much of the queue's unused nominal
	// quota its cohort peers may use; the rest stays reserved for it. A
	// flavor missing from the map (or a nil map) lends all of it.
	LendingLimit Amounts
	// Weight scales the queue's fair share; 0 means 1.
	Weight float64
	// ShareGPUs is the size fair share measures the queue's use against,
	// in GPUs, for a queue whose nominal quota is no real limit (a tenant
	// without a cap: the machine or cluster it may fill); 0 means its
	// nominal quota.
	ShareGPUs float64
	Order     Order
}

func (s *Spec) weight() float64 {
	if s.Weight == 0 {
		return 1
	}
	return s.Weight
}

// validate checks s on its own; relations between queues are checked by
// validateTree.
func (s *Spec) validate() error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("queue %q: "+format, append([]any{s.Name}, args...)...))
	}
	if s.Name == "" {
		return errors.New("queue with no name")
	}
	for _, q := range []struct {
		what string
		a    Amounts
	}{{"nominal quota", s.Nominal}, {"borrowing limit", s.BorrowingLimit}, {"lending limit", s.LendingLimit}} {
		if f, ok := q.a.negative(); ok {
			add("negative %s: %d milli-GPUs of %v", q.what, q.a[f], f)
		}
	}
	if s.Cohort == "" && (len(s.BorrowingLimit) > 0 || len(s.LendingLimit) > 0) {
		add("borrowing or lending limit without a cohort")
	}
	if s.Weight < 0 || math.IsNaN(s.Weight) || math.IsInf(s.Weight, 0) {
		add("weight %v, want a positive number (0 means 1)", s.Weight)
	}
	if s.ShareGPUs < 0 || math.IsNaN(s.ShareGPUs) || math.IsInf(s.ShareGPUs, 0) {
		add("share GPUs %v, want a positive number (0 means the nominal quota)", s.ShareGPUs)
	}
	if s.Order < FIFO || s.Order > ShortestFirst {
		add("unknown order %d", int(s.Order))
	}
	if s.Parent == s.Name {
		add("is its own parent")
	}
	return errors.Join(errs...)
}

// validateSpecs reports everything wrong with specs: each spec on its own,
// duplicate names, unknown parents and parent cycles.
func validateSpecs(specs []Spec) error {
	var errs []error
	seen := make(map[string]bool, len(specs))
	for i := range specs {
		s := &specs[i]
		if err := s.validate(); err != nil {
			errs = append(errs, err)
		}
		if s.Name != "" && seen[s.Name] {
			errs = append(errs, fmt.Errorf("queue %q: declared twice", s.Name))
		}
		seen[s.Name] = true
	}
	parent := make(map[string]string, len(specs))
	for _, s := range specs {
		parent[s.Name] = s.Parent
	}
	for _, s := range specs {
		if s.Parent != "" && !seen[s.Parent] {
			errs = append(errs, fmt.Errorf("queue %q: unknown parent %q", s.Name, s.Parent))
		}
	}
	for _, s := range specs {
		if cycle := parentCycle(s.Name, parent); cycle != nil && s.Parent != s.Name {
			errs = append(errs, fmt.Errorf("queue %q: parent cycle %s", s.Name, strings.Join(cycle, " -> ")))
		}
	}
	return errors.Join(errs...)
}

// parentCycle is the chain of parents from name back to name when name lies
// on a cycle, nil otherwise.
func parentCycle(name string, parent map[string]string) []string {
	chain := []string{name}
	at := name
	for range len(parent) {
		at = parent[at]
		if at == "" {
			return nil
		}
		chain = append(chain, at)
		if at == name {
			return chain
		}
	}
	return nil
}

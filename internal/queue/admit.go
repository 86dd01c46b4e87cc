package queue

import (
	"cmp"
	"fmt"
	"slices"
)

// Admission is what Admit recorded: the need, and the loans it took.
type Admission struct {
	Queue string
	Need  Amounts
	// Loans are the loans this admission added, at the admitting queue and
	// at every ancestor that had to borrow, the admitting queue first, then
	// by flavor and lender. Borrowing takes from the peer with the most
	// unused, lendable nominal quota first, ties by name.
	Loans []Loan
}

// Borrowed is how much of the need the admitting queue itself borrows from
// its peers (ancestors' loans not counted).
func (a Admission) Borrowed() Amounts {
	out := Amounts{}
	for _, l := range a.Loans {
		if l.Borrower == a.Queue {
			out[l.Flavor] += l.Milli
		}
	}
	return out
}

// Admit records that leaf queue uses need from now on, if it can: at the
// queue and at each of its ancestors, within its nominal quota or by
// borrowing its cohort peers' unused nominal quota within their lending
// limits and its borrowing limit. When it cannot, nothing changes and the
// error is a *QuotaError (it wraps ErrNoQuota) for the first level and
// flavor without room.
func (b *Book) Admit(queue string, need Amounts) (Admission, error) {
	i, err := b.checked(queue, need)
	if err != nil {
		return Admission{}, fmt.Errorf("admit %v: %w", need, err)
	}
	flavors := need.Flavors()
	before := b.pathLoans(i, flavors)
	b.apply(i, need, 1)
	after := b.pathLoans(i, flavors)
	return Admission{Queue: queue, Need: need.Clone(), Loans: loanDiff(after, before)}, nil
}

// Hold records that leaf queue uses need from now on, room or not: work
// that already runs, which a face learns from what is bound or running
// (after the queue's quota shrank, or a lender in its cohort went away).
// The queue may then use more than its nominal quota and what its cohort
// lends; nothing more is admitted to it, and its cohort lends nothing
// more, until releases bring it back within them.
func (b *Book) Hold(queue string, need Amounts) error {
	i, err := b.leaf(queue)
	if err != nil {
		return fmt.Errorf("hold %v: %w", need, err)
	}
	if f, neg := need.negative(); neg {
		return fmt.Errorf("hold %v: queue %q: negative amount for %v", need, queue, f)
	}
	b.apply(i, need, 1)
	return nil
}

// CanAdmit reports whether Admit(queue, need) would succeed now, with the
// error it would return; it changes nothing.
func (b *Book) CanAdmit(queue string, need Amounts) error {
	if _, err := b.checked(queue, need); err != nil {
		return fmt.Errorf("admit %v: %w", need, err)
	}
	return nil
}

// Release records that leaf queue no longer uses amounts. It fails, and
// changes nothing, when the queue uses less than that. With no Advance in
// between, Admit then Release of the same amounts leaves the Book exactly
// as it was, loans included.
func (b *Book) Release(queue string, amounts Amounts) error {
	i, err := b.leaf(queue)
	if err != nil {
		return fmt.Errorf("release %v: %w", amounts, err)
	}
	if f, neg := amounts.negative(); neg {
		return fmt.Errorf("release %v: queue %q: negative amount for %v", amounts, queue, f)
	}
	used := b.queues[i].used
	for _, f := range amounts.Flavors() {
		if amounts[f] > used[f] {
			return fmt.Errorf("release %v: queue %q uses only %s GPUs of %v", amounts, queue, MilliString(used[f]), f)
		}
	}
	b.apply(i, amounts, -1)
	return nil
}

// Headroom is the most of flavor f that could be admitted to queue now: the
// least room along the queue and its ancestors. It is 0 for an unknown
// queue.
func (b *Book) Headroom(queue string, f Flavor) int64 {
	i, ok := b.index[queue]
	if !ok {
		return 0
	}
	h := b.room(i, f)
	for _, q := range b.path(i)[1:] {
		h = min(h, b.room(q, f))
	}
	return h
}

// checked finds leaf queue and checks that need fits along its path.
func (b *Book) checked(queue string, need Amounts) (int, error) {
	i, err := b.leaf(queue)
	if err != nil {
		return 0, err
	}
	if f, neg := need.negative(); neg {
		return 0, fmt.Errorf("queue %q: negative amount for %v", queue, f)
	}
	for _, q := range b.path(i) {
		for _, f := range need.Flavors() {
			if room := b.room(q, f); need[f] > room {
				return 0, &QuotaError{Queue: queue, Level: b.queues[q].spec.Name, Flavor: f,
					Need: need[f], Room: room, Reclaimable: b.lent(q, f)}
			}
		}
	}
	return i, nil
}

// apply adds sign*amounts to the usage of leaf i and its ancestors.
func (b *Book) apply(i int, amounts Amounts, sign int64) {
	for _, q := range b.path(i) {
		used := b.queues[q].used
		for f, v := range amounts {
			used[f] += sign * v
		}
		used.compact()
	}
}

// pathLoans are the loans taken by i and its ancestors in flavors.
func (b *Book) pathLoans(i int, flavors []Flavor) []Loan {
	var out []Loan
	for _, q := range b.path(i) {
		for _, f := range flavors {
			for _, l := range b.alloc(b.queues[q].group, f) {
				if l.Borrower == b.queues[q].spec.Name {
					out = append(out, l)
				}
			}
		}
	}
	return out
}

// loanDiff is after - before per borrower, lender and flavor, keeping the
// order of after; amounts that did not grow are left out.
func loanDiff(after, before []Loan) []Loan {
	type key struct {
		borrower, lender string
		flavor           Flavor
	}
	had := make(map[key]int64, len(before))
	for _, l := range before {
		had[key{l.Borrower, l.Lender, l.Flavor}] += l.Milli
	}
	var out []Loan
	for _, l := range after {
		if d := l.Milli - had[key{l.Borrower, l.Lender, l.Flavor}]; d > 0 {
			l.Milli = d
			out = append(out, l)
		}
	}
	return out
}

// sortLoans orders loans by flavor, borrower, lender.
func sortLoans(loans []Loan) {
	slices.SortStableFunc(loans, func(a, b Loan) int {
		return cmp.Or(compareFlavors(a.Flavor, b.Flavor), cmp.Compare(a.Borrower, b.Borrower), cmp.Compare(a.Lender, b.Lender))
	})
}

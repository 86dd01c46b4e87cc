package queue

import (
	"cmp"
	"slices"
)

// Lending. Loans are not stored: they are a deterministic function of what
// every queue uses, recomputed on demand (alloc). Within a lending group
// and flavor:
//
//	overflow(q) = max(0, used(q) - nominal(q))                  what q borrows
//	avail(q)    = min(max(0, nominal(q) - used(q)), lending(q)) what q may lend
//	slack       = sum avail - sum overflow                      free to borrow
//
// The state is valid when slack >= 0 and each overflow is within its
// borrowing limit; Admit keeps it valid. Hold may not (work that runs
// beyond what its cohort now lends): the loans then cover what the
// lenders have, name order first, the rest of the overflow is borrowed
// from nobody, and room is 0 for every borrower until slack is back. A queue either borrows or lends,
// never both. Borrowers are matched to lenders in name order, each taking
// from the lender with the most left to lend first (ties by name), so the
// sum borrowed always equals the sum lent, and Release restores the loans
// exactly. As usage changes elsewhere in the group a loan may move from
// one lender to another; the amounts borrowed and lent per queue do not.

// Loan is Milli milli-GPUs of flavor Flavor of Lender's nominal quota that
// Borrower, a cohort peer, uses now.
type Loan struct {
	Borrower, Lender string
	Flavor           Flavor
	Milli            int64
}

func (b *Book) overflow(q int, f Flavor) int64 {
	n := b.queues[q]
	return max(0, n.used[f]-n.spec.Nominal[f])
}

func (b *Book) avail(q int, f Flavor) int64 {
	n := b.queues[q]
	a := max(0, n.spec.Nominal[f]-n.used[f])
	if limit, ok := n.spec.LendingLimit[f]; ok {
		a = min(a, limit)
	}
	return a
}

// slack is how much of flavor f group g's lenders have left to lend.
func (b *Book) slack(g int, f Flavor) int64 {
	var s int64
	for _, m := range b.groups[g].members {
		s += b.avail(m, f) - b.overflow(m, f)
	}
	return s
}

// room is how much more of flavor f queue q may use, looking at its own
// group only: the part of its unused nominal quota it does not lend, plus
// the group's slack, within its borrowing limit. Using the lendable part of
// its own nominal takes it from the group as borrowing does.
func (b *Book) room(q int, f Flavor) int64 {
	n := b.queues[q]
	free := n.spec.Nominal[f] - n.used[f]
	var reserved int64
	if limit, ok := n.spec.LendingLimit[f]; ok && free > limit {
		reserved = free - limit
	}
	r := reserved + b.slack(n.group, f)
	if limit, ok := n.spec.BorrowingLimit[f]; ok {
		r = min(r, n.spec.Nominal[f]+limit-n.used[f])
	}
	return max(0, r)
}

// alloc matches the borrowers of flavor f in group g to its lenders.
func (b *Book) alloc(g int, f Flavor) []Loan {
	members := b.groups[g].members
	if len(members) < 2 {
		return nil
	}
	left := make([]int64, len(members))
	for k, m := range members {
		left[k] = b.avail(m, f)
	}
	var loans []Loan
	for _, m := range members {
		need := b.overflow(m, f)
		lenders := mostLeftFirst(left, need)
		takes := make([]int64, len(lenders))
		for k, l := range lenders {
			takes[k] = min(need, left[l])
			left[l] -= takes[k]
			need -= takes[k]
		}
		loans = append(loans, b.loansTo(m, f, members, lenders, takes)...)
		// need > 0 is overflow no lender covers: held work (Hold).
	}
	return loans
}

// loansTo lists the loans of flavor f to queue borrower: takes[k] from the
// member at position lenders[k], in lender name order.
func (b *Book) loansTo(borrower int, f Flavor, members, lenders []int, takes []int64) []Loan {
	loans := make([]Loan, len(lenders))
	for k, l := range lenders {
		loans[k] = Loan{Borrower: b.queues[borrower].spec.Name, Lender: b.queues[members[l]].spec.Name, Flavor: f, Milli: takes[k]}
	}
	slices.SortFunc(loans, func(x, y Loan) int { return cmp.Compare(x.Lender, y.Lender) })
	return loans
}

// mostLeftFirst lists the positions of left with something left, the most
// first, ties by position, as far as needed to cover need.
func mostLeftFirst(left []int64, need int64) []int {
	if need == 0 {
		return nil
	}
	var order []int
	for l, v := range left {
		if v > 0 {
			order = append(order, l)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(left[y], left[x]) })
	for k, l := range order {
		need -= left[l]
		if need <= 0 {
			return order[:k+1]
		}
	}
	return order
}

// loansOf lists the loans of queue's group that pass keep, by flavor,
// borrower, lender.
func (b *Book) loansOf(queue string, keep func(Loan) bool) []Loan {
	i, ok := b.index[queue]
	if !ok {
		return nil
	}
	g := b.queues[i].group
	var out []Loan
	for _, f := range b.groups[g].flavors {
		for _, l := range b.alloc(g, f) {
			if keep(l) {
				out = append(out, l)
			}
		}
	}
	sortLoans(out)
	return out
}

// Lenders lists the loans queue takes now: whose nominal quota it uses.
func (b *Book) Lenders(queue string) []Loan {
	return b.loansOf(queue, func(l Loan) bool { return l.Borrower == queue })
}

// Borrowers lists the loans queue gives now: which peers use its nominal
// quota, and how much. A preemption step that must reclaim queue's quota
// stops jobs of these queues (or of the queues below them).
func (b *Book) Borrowers(queue string) []Loan {
	return b.loansOf(queue, func(l Loan) bool { return l.Lender == queue })
}

// Loans lists every loan in every cohort, by flavor, borrower, lender.
func (b *Book) Loans() []Loan {
	var out []Loan
	for g := range b.groups {
		for _, f := range b.groups[g].flavors {
			out = append(out, b.alloc(g, f)...)
		}
	}
	sortLoans(out)
	return out
}

// Borrowed is how much queue uses beyond its nominal quota, borrowed from
// its peers.
func (b *Book) Borrowed(queue string) Amounts {
	i, ok := b.index[queue]
	if !ok {
		return Amounts{}
	}
	out := Amounts{}
	for f := range b.queues[i].used {
		out[f] = b.overflow(i, f)
	}
	return out.compact()
}

// Lent is how much of queue's nominal quota its peers use now.
func (b *Book) Lent(queue string) Amounts {
	out := Amounts{}
	for _, l := range b.Borrowers(queue) {
		out[l.Flavor] += l.Milli
	}
	return out
}

// Reclaimable is how much of flavor f of queue's nominal quota its cohort
// peers use now: what queue may take back by preempting them when it needs
// its quota.
func (b *Book) Reclaimable(queue string, f Flavor) int64 {
	i, ok := b.index[queue]
	if !ok {
		return 0
	}
	return b.lent(i, f)
}

func (b *Book) lent(q int, f Flavor) int64 {
	var s int64
	name := b.queues[q].spec.Name
	for _, l := range b.alloc(b.queues[q].group, f) {
		if l.Lender == name {
			s += l.Milli
		}
	}
	return s
}

package queue

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

var propFlavors = []Flavor{a100, h100}

// randomSpecs is a random forest of queues: top-level queues in two cohorts
// or none, some with children that lend among themselves, random nominal
// quotas (in quarters of a GPU), borrowing and lending limits.
func randomSpecs(r *rand.Rand) []Spec {
	quota := func(most int) Amounts {
		a := Amounts{}
		for _, f := range propFlavors {
			if r.IntN(4) > 0 {
				a[f] = int64(r.IntN(most*4+1)) * Milli / 4
			}
		}
		return a
	}
	limits := func(cohort string) Amounts {
		if cohort == "" || r.IntN(3) > 0 {
			return nil
		}
		return quota(4)
	}
	var specs []Spec
	for t := range 2 + r.IntN(3) {
		top := Spec{Name: fmt.Sprintf("q%d", t), Cohort: []string{"", "c1", "c2", "c1"}[r.IntN(4)], Nominal: quota(8)}
		top.BorrowingLimit, top.LendingLimit = limits(top.Cohort), limits(top.Cohort)
		specs = append(specs, top)
		if r.IntN(3) > 0 {
			continue
		}
		for c := range 1 + r.IntN(3) {
			child := Spec{Name: fmt.Sprintf("q%d.%d", t, c), Parent: top.Name, Cohort: []string{"", "s"}[r.IntN(2)], Nominal: quota(6)}
			child.BorrowingLimit, child.LendingLimit = limits(child.Cohort), limits(child.Cohort)
			specs = append(specs, child)
		}
	}
	return specs
}

// model is the test's own account of usage, and its own rule of what is
// allowed, written from the definitions rather than from lend.go.
type model struct {
	specs    map[string]Spec
	names    []string            // sorted
	children map[string][]string // by name
	peers    map[string][]string // q and the queues it lends to and borrows from
	use      map[string]Amounts  // admitted to each leaf
}

func newModel(specs []Spec) *model {
	m := &model{specs: map[string]Spec{}, children: map[string][]string{}, peers: map[string][]string{}, use: map[string]Amounts{}}
	for _, s := range specs {
		m.specs[s.Name] = s
		m.names = append(m.names, s.Name)
	}
	slices.Sort(m.names)
	for _, q := range m.names {
		s := m.specs[q]
		m.children[s.Parent] = append(m.children[s.Parent], q)
		m.peers[q] = []string{q}
		if s.Cohort == "" {
			continue
		}
		m.peers[q] = nil
		for _, p := range m.names {
			if ps := m.specs[p]; ps.Parent == s.Parent && ps.Cohort == s.Cohort {
				m.peers[q] = append(m.peers[q], p)
			}
		}
	}
	return m
}

// used is q's usage: its own plus its descendants'.
func (m *model) used(q string) Amounts {
	total := m.use[q].Add(nil)
	for _, c := range m.children[q] {
		total = total.Add(m.used(c))
	}
	return total
}

// usedAll is every queue's usage.
func (m *model) usedAll() map[string]Amounts {
	used := map[string]Amounts{}
	for _, q := range m.names {
		used[q] = m.used(q)
	}
	return used
}

func (m *model) leaves() []string {
	var out []string
	for _, q := range m.names {
		if len(m.children[q]) == 0 {
			out = append(out, q)
		}
	}
	return out
}

// valid reports whether every queue's usage beyond its nominal quota can be
// lent by its peers' unused nominal quota within their lending limits, and
// is within its borrowing limit; why not when it is not.
func (m *model) valid() error {
	used := m.usedAll()
	for _, q := range m.names {
		for _, f := range propFlavors {
			var beyond, lendable int64
			for _, p := range m.peers[q] {
				s := m.specs[p]
				over := used[p][f] - s.Nominal[f]
				if over > 0 {
					beyond += over
				} else if limit, ok := s.LendingLimit[f]; ok {
					lendable += min(-over, limit)
				} else {
					lendable += -over
				}
			}
			if beyond > lendable {
				return fmt.Errorf("%s's cohort borrows %d of %v, lends only %d", q, beyond, f, lendable)
			}
			s := m.specs[q]
			if limit, ok := s.BorrowingLimit[f]; ok && used[q][f] > s.Nominal[f]+limit {
				return fmt.Errorf("%s uses %d of %v beyond nominal %d + borrowing limit %d", q, used[q][f], f, s.Nominal[f], limit)
			}
		}
	}
	return nil
}

// snapshot is everything observable about usage and loans.
type snapshot struct {
	usage    map[string]string
	headroom map[string][]int64
	loans    []Loan
}

func snap(b *Book) snapshot {
	s := snapshot{usage: map[string]string{}, headroom: map[string][]int64{}, loans: b.Loans()}
	for _, q := range b.Queues() {
		s.usage[q] = b.Usage(q).String()
		for _, f := range propFlavors {
			s.headroom[q] = append(s.headroom[q], b.Headroom(q, f))
		}
	}
	return s
}

// held is an admission not yet released.
type held struct {
	queue string
	need  Amounts
}

// TestAdmitReleaseProperties runs thousands of random Admit/Release
// sequences on random queue forests and checks after every step that the
// Book agrees with the model: Admit succeeds exactly when the model allows
// it, no usage exceeds nominal plus allowed borrowing, the sum borrowed
// equals the sum lent, and Release restores the state exactly.
func TestAdmitReleaseProperties(t *testing.T) {
	const workers = 8
	sequences := uint64(2000)
	if testing.Short() {
		sequences = 200
	}
	for w := range uint64(workers) {
		t.Run(fmt.Sprintf("seeds%d", w), func(t *testing.T) {
			t.Parallel()
			for seed := w; seed < sequences; seed += workers {
				runSequence(t, seed, 50)
			}
		})
	}
}

// sequence is one random run: a Book, the model it must agree with, and
// the admissions not yet released.
type sequence struct {
	t     *testing.T
	seed  uint64
	r     *rand.Rand
	specs []Spec
	b     *Book
	m     *model
	live  []held
}

func (s *sequence) fail(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("seed %d: specs %+v: "+format, append([]any{s.seed, s.specs}, args...)...)
}

// runSequence runs steps random Admits and Releases on a random forest,
// then releases everything.
func runSequence(t *testing.T, seed uint64, steps int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0x9e3779b9))
	specs := randomSpecs(r)
	s := &sequence{t: t, seed: seed, r: r, specs: specs, b: mustBook(t, 0, specs...), m: newModel(specs)}
	for step := range steps {
		if len(s.live) > 0 && r.IntN(3) == 0 {
			k := r.IntN(len(s.live))
			h := s.live[k]
			s.live = append(s.live[:k], s.live[k+1:]...)
			s.release(step, h)
		} else {
			s.admit(step)
		}
		checkLedger(t, s.b, s.m, seed, step)
	}
	for _, h := range s.live {
		s.release(steps, h)
	}
	for _, q := range s.b.Queues() {
		if u := s.b.Usage(q); len(u) != 0 {
			s.fail("after releasing everything %s uses %v", q, u)
		}
	}
	if l := s.b.Loans(); len(l) != 0 {
		s.fail("after releasing everything loans remain: %v", l)
	}
}

func (s *sequence) release(step int, h held) {
	s.t.Helper()
	if err := s.b.Release(h.queue, h.need); err != nil {
		s.fail("step %d: Release(%s, %v): %v", step, h.queue, h.need, err)
	}
	s.m.use[h.queue] = s.m.use[h.queue].Sub(h.need)
}

// admit tries a random need at a random leaf. Admit must succeed exactly
// when the model allows it; a failure must change nothing; an admission
// released at once must leave the Book as it was.
func (s *sequence) admit(step int) {
	s.t.Helper()
	leaves := s.m.leaves()
	q := leaves[s.r.IntN(len(leaves))]
	need := Amounts{}
	for _, f := range propFlavors {
		if s.r.IntN(2) == 0 {
			need[f] = int64(s.r.IntN(6*4+1)) * Milli / 4
		}
	}
	before := snap(s.b)
	s.m.use[q] = s.m.use[q].Add(need)
	allowed := s.m.valid()
	a, err := s.b.Admit(q, need)
	if (err == nil) != (allowed == nil) {
		s.fail("step %d: Admit(%s, %v): %v, but the model says %v", step, q, need, err, allowed)
	}
	if err != nil {
		s.m.use[q] = s.m.use[q].Sub(need)
		if got := snap(s.b); !reflect.DeepEqual(got, before) {
			s.fail("step %d: a failed Admit changed the Book", step)
		}
		return
	}
	checkAdmission(s.t, s.b, a, before, s.seed)
	if s.r.IntN(4) > 0 {
		s.live = append(s.live, held{q, need})
		return
	}
	s.release(step, held{q, need})
	if got := snap(s.b); !reflect.DeepEqual(got, before) {
		s.fail("step %d: Admit(%s, %v) then Release: %+v, want %+v", step, q, need, got, before)
	}
}

// checkAdmission checks that an admission's loans are what the admitting
// queue and its ancestors borrow now beyond what they did before.
func checkAdmission(t *testing.T, b *Book, a Admission, before snapshot, seed uint64) {
	t.Helper()
	grew := map[string]Amounts{}
	for _, l := range a.Loans {
		if l.Milli <= 0 {
			t.Fatalf("seed %d: admission loan %+v", seed, l)
		}
		grew[l.Borrower] = grew[l.Borrower].Add(Amounts{l.Flavor: l.Milli})
	}
	for _, q := range b.Queues() {
		was := parseBorrowed(b, q, before)
		if got, want := grew[q].Add(nil), b.Borrowed(q).Sub(was); !got.Equal(want) {
			t.Fatalf("seed %d: admission to %s: loans to %s add %v, its borrowing grew by %v", seed, a.Queue, q, got, want)
		}
	}
	if got, want := a.Borrowed(), grew[a.Queue].Add(nil); !got.Equal(want) {
		t.Fatalf("seed %d: Admission.Borrowed %v, want %v", seed, got, want)
	}
}

// parseBorrowed is what q borrowed at the snapshot, from its loans.
func parseBorrowed(b *Book, q string, s snapshot) Amounts {
	out := Amounts{}
	for _, l := range s.loans {
		if l.Borrower == q {
			out[l.Flavor] += l.Milli
		}
	}
	return out
}

// checkLedger checks the Book against the model after a step.
func checkLedger(t *testing.T, b *Book, m *model, seed uint64, step int) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d step %d: "+format, append([]any{seed, step}, args...)...)
	}
	var sumBorrowed, sumLent Amounts
	usedAll := m.usedAll()
	for _, q := range b.Queues() {
		s, used := m.specs[q], usedAll[q]
		if got := b.Usage(q); !got.Equal(used) {
			fail("Usage(%s) = %v, model %v", q, got, used)
		}
		var peerNominal Amounts
		for _, p := range m.peers[q] {
			if p != q {
				peerNominal = peerNominal.Add(m.specs[p].Nominal)
			}
		}
		most := s.Nominal.Add(peerNominal)
		for f, limit := range s.BorrowingLimit {
			most[f] = min(most[f], s.Nominal[f]+limit)
		}
		if !used.Fits(most) {
			fail("%s uses %v, more than nominal plus allowed borrowing %v", q, used, most)
		}
		borrowed, lent := b.Borrowed(q), b.Lent(q)
		if !borrowed.Equal(positive(used.Sub(s.Nominal))) {
			fail("Borrowed(%s) = %v, usage %v, nominal %v", q, borrowed, used, s.Nominal)
		}
		if !sumLoans(b.Lenders(q)).Equal(borrowed) {
			fail("Lenders(%s) sum to %v, Borrowed %v", q, sumLoans(b.Lenders(q)), borrowed)
		}
		for _, f := range propFlavors {
			unused := max(0, s.Nominal[f]-used[f])
			if limit, ok := s.LendingLimit[f]; ok {
				unused = min(unused, limit)
			}
			if lent[f] > unused || b.Reclaimable(q, f) != lent[f] {
				fail("%s lends %v of %v (reclaimable %d), more than its lendable unused nominal %d", q, lent[f], f, b.Reclaimable(q, f), unused)
			}
		}
		for _, l := range b.Borrowers(q) {
			if bs := m.specs[l.Borrower]; l.Lender != q || bs.Parent != s.Parent || bs.Cohort != s.Cohort || s.Cohort == "" || l.Milli <= 0 {
				fail("loan %+v from %s is not between cohort peers", l, q)
			}
		}
		sumBorrowed, sumLent = sumBorrowed.Add(borrowed), sumLent.Add(lent)
	}
	if !sumBorrowed.Equal(sumLent) || !sumLoans(b.Loans()).Equal(sumLent) {
		fail("borrowed %v, lent %v, loans %v", sumBorrowed, sumLent, sumLoans(b.Loans()))
	}
}

func positive(a Amounts) Amounts {
	out := Amounts{}
	for f, v := range a {
		if v > 0 {
			out[f] = v
		}
	}
	return out
}

func sumLoans(loans []Loan) Amounts {
	out := Amounts{}
	for _, l := range loans {
		out[l.Flavor] += l.Milli
	}
	return out
}

// TestDeterministic replays random sequences on Books built from the specs
// in two orders: every admission and the final loans are the same.
func TestDeterministic(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		specs := randomSpecs(r)
		shuffled := append([]Spec(nil), specs...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		run := func(specs []Spec) []string {
			b := mustBook(t, 0, specs...)
			leaves := newModel(specs).leaves()
			rr := rand.New(rand.NewPCG(seed, 8))
			var out []string
			for range 40 {
				q := leaves[rr.IntN(len(leaves))]
				a, err := b.Admit(q, Amounts{h100: int64(rr.IntN(5)) * Milli, a100: int64(rr.IntN(3)) * Milli})
				out = append(out, fmt.Sprintf("%+v %v", a, err))
			}
			return append(out, fmt.Sprint(b.Loans()))
		}
		if a, b := run(specs), run(shuffled); !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: spec order changes the outcome:\n%v\n%v", seed, a, b)
		}
	}
}

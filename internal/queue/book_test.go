package queue

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// op is one step of a scenario: an admission or a release, with what must
// come of it.
type op struct {
	queue   string
	admit   Amounts // or
	release Amounts
	fails   string // admit: a substring of the error; "" means it succeeds
	loans   []Loan // admit: the loans the admission took
}

// expect is the state after a scenario's steps, in H100s unless spelled
// out.
type expect struct {
	usage       map[string]int64 // GPUs
	borrowed    map[string]int64 // GPUs
	reclaimable map[string]int64 // GPUs
	headroom    map[string]int64 // GPUs
	loans       []Loan           // every loan, as Book.Loans lists them
	noLoans     bool             // no loans at all
}

type scenario struct {
	name   string
	specs  []Spec
	steps  []op
	expect expect
}

func loan(borrower, lender string, gpus int64) Loan {
	return Loan{Borrower: borrower, Lender: lender, Flavor: h100, Milli: gpus * Milli}
}

func (sc scenario) run(t *testing.T) {
	b := mustBook(t, 0, sc.specs...)
	for k, s := range sc.steps {
		where := fmt.Sprintf("step %d (%s)", k, s.queue)
		if s.release != nil {
			if err := b.Release(s.queue, s.release); err != nil {
				t.Fatalf("%s: Release: %v", where, err)
			}
			continue
		}
		canErr := b.CanAdmit(s.queue, s.admit)
		a, err := b.Admit(s.queue, s.admit)
		if (canErr == nil) != (err == nil) {
			t.Errorf("%s: CanAdmit says %v, Admit says %v", where, canErr, err)
		}
		if s.fails != "" {
			if err == nil || !strings.Contains(err.Error(), s.fails) {
				t.Fatalf("%s: Admit(%v) error %v, want one with %q", where, s.admit, err, s.fails)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: Admit(%v): %v", where, s.admit, err)
		}
		if !reflect.DeepEqual(a.Loans, s.loans) {
			t.Errorf("%s: admission loans %v, want %v", where, a.Loans, s.loans)
		}
	}
	e := sc.expect
	for q, want := range e.usage {
		if got := b.Usage(q)[h100]; got != want*Milli {
			t.Errorf("Usage(%s) = %v, want %d GPUs", q, b.Usage(q), want)
		}
	}
	for q, want := range e.borrowed {
		if got := b.Borrowed(q)[h100]; got != want*Milli {
			t.Errorf("Borrowed(%s) = %v, want %d GPUs", q, b.Borrowed(q), want)
		}
	}
	for q, want := range e.reclaimable {
		if got := b.Reclaimable(q, h100); got != want*Milli {
			t.Errorf("Reclaimable(%s) = %d, want %d GPUs", q, got, want)
		}
	}
	for q, want := range e.headroom {
		if got := b.Headroom(q, h100); got != want*Milli {
			t.Errorf("Headroom(%s) = %d, want %d GPUs", q, got, want)
		}
	}
	if e.loans != nil || e.noLoans {
		if got := b.Loans(); !reflect.DeepEqual(got, e.loans) {
			t.Errorf("Loans = %v, want %v", got, e.loans)
		}
	}
}

// pair is two queues of 8 H100s in one cohort.
func pair(a, b Spec) []Spec {
	a.Name, a.Cohort, a.Nominal = "A", "c", gpu(8)
	b.Name, b.Cohort, b.Nominal = "B", "c", gpu(8)
	return []Spec{a, b}
}

func TestBorrowLend(t *testing.T) {
	for _, sc := range []scenario{{
		name:  "A borrows what B leaves unused",
		specs: pair(Spec{}, Spec{}),
		steps: []op{
			{queue: "B", admit: gpu(4)},
			{queue: "A", admit: gpu(12), loans: []Loan{loan("A", "B", 4)}},
		},
		expect: expect{
			usage:       map[string]int64{"A": 12, "B": 4},
			borrowed:    map[string]int64{"A": 4, "B": 0},
			reclaimable: map[string]int64{"A": 0, "B": 4},
			headroom:    map[string]int64{"A": 0, "B": 0},
			loans:       []Loan{loan("A", "B", 4)},
		},
	}, {
		name:  "not 17: the cohort has 16",
		specs: pair(Spec{}, Spec{}),
		steps: []op{
			{queue: "B", admit: gpu(4)},
			{queue: "A", admit: gpu(13), fails: "need 13 GPUs, room for 12"},
			{queue: "A", admit: gpu(12), loans: []Loan{loan("A", "B", 4)}},
			{queue: "A", admit: gpu(1), fails: "room for 0"},
		},
		expect: expect{usage: map[string]int64{"A": 12}, loans: []Loan{loan("A", "B", 4)}},
	}, {
		name:  "B needs its lent quota back: reclaim, not admit",
		specs: pair(Spec{}, Spec{}),
		steps: []op{
			{queue: "A", admit: gpu(12), loans: []Loan{loan("A", "B", 4)}},
			{queue: "B", admit: gpu(4)},
			{queue: "B", admit: gpu(1), fails: `queue "B": H100-80GB/on-demand: need 1 GPUs, room for 0 (4 of its nominal lent out)`},
		},
		expect: expect{reclaimable: map[string]int64{"B": 4}, headroom: map[string]int64{"B": 0}},
	}, {
		name:  "release ends the loan",
		specs: pair(Spec{}, Spec{}),
		steps: []op{
			{queue: "B", admit: gpu(4)},
			{queue: "A", admit: gpu(12), loans: []Loan{loan("A", "B", 4)}},
			{queue: "A", release: gpu(3)},
		},
		expect: expect{
			usage:       map[string]int64{"A": 9},
			borrowed:    map[string]int64{"A": 1},
			reclaimable: map[string]int64{"B": 1},
			headroom:    map[string]int64{"A": 3, "B": 3},
			loans:       []Loan{loan("A", "B", 1)},
		},
	}, {
		name:  "release below nominal: nothing borrowed",
		specs: pair(Spec{}, Spec{}),
		steps: []op{
			{queue: "A", admit: gpu(12), loans: []Loan{loan("A", "B", 4)}},
			{queue: "A", release: gpu(5)},
		},
		expect: expect{borrowed: map[string]int64{"A": 0}, reclaimable: map[string]int64{"B": 0}, headroom: map[string]int64{"A": 9, "B": 9}, noLoans: true},
	}, {
		name:  "lending limit: B lends at most 2 and keeps 6 to itself",
		specs: pair(Spec{}, Spec{LendingLimit: gpu(2)}),
		steps: []op{
			{queue: "A", admit: gpu(11), fails: "room for 10"},
			{queue: "A", admit: gpu(10), loans: []Loan{loan("A", "B", 2)}},
			{queue: "B", admit: gpu(6)},
			{queue: "B", admit: gpu(1), fails: "2 of its nominal lent out"},
		},
		expect: expect{reclaimable: map[string]int64{"B": 2}, borrowed: map[string]int64{"A": 2}},
	}, {
		name:  "lending limit caps what B lends even when B is busy",
		specs: pair(Spec{}, Spec{LendingLimit: gpu(2)}),
		steps: []op{
			{queue: "B", admit: gpu(7)},
			{queue: "A", admit: gpu(10), fails: "room for 9"},
			{queue: "A", admit: gpu(9), loans: []Loan{loan("A", "B", 1)}},
		},
		expect: expect{headroom: map[string]int64{"A": 0, "B": 0}},
	}, {
		name:  "borrowing limit: A borrows at most 3",
		specs: pair(Spec{BorrowingLimit: gpu(3)}, Spec{}),
		steps: []op{
			{queue: "A", admit: gpu(12), fails: "room for 11"},
			{queue: "A", admit: gpu(11), loans: []Loan{loan("A", "B", 3)}},
			{queue: "B", admit: gpu(5)},
		},
		expect: expect{headroom: map[string]int64{"A": 0, "B": 0}, reclaimable: map[string]int64{"B": 3}},
	}, {
		name:  "zero borrowing limit for one flavor, none for another",
		specs: pair(Spec{BorrowingLimit: Amounts{h100: 0}}, Spec{}),
		steps: []op{
			{queue: "A", admit: gpu(9), fails: "room for 8"},
			{queue: "B", admit: gpu(8).Add(GPUs(a100, 2)), fails: "A100-40GB/on-demand: need 2 GPUs, room for 0"},
		},
		expect: expect{usage: map[string]int64{"A": 0, "B": 0}},
	}, {
		name: "most unused nominal lends first, ties by name",
		specs: []Spec{
			{Name: "A", Cohort: "c", Nominal: gpu(8)},
			{Name: "B", Cohort: "c", Nominal: gpu(8)},
			{Name: "C", Cohort: "c", Nominal: gpu(8)},
			{Name: "D", Cohort: "c", Nominal: gpu(8)},
		},
		steps: []op{
			{queue: "B", admit: gpu(2)},
			{queue: "C", admit: gpu(5)},
			{queue: "D", admit: gpu(2)},
			// B and D have 6 each, C 3: B first by name, then D.
			{queue: "A", admit: gpu(15), loans: []Loan{loan("A", "B", 6), loan("A", "D", 1)}},
			// Now C has 3 and D 5.
			{queue: "A", admit: gpu(6), loans: []Loan{loan("A", "C", 1), loan("A", "D", 5)}},
			{queue: "A", admit: gpu(3), fails: "room for 2"},
		},
		expect: expect{
			borrowed:    map[string]int64{"A": 13},
			reclaimable: map[string]int64{"B": 6, "C": 1, "D": 6},
			loans:       []Loan{loan("A", "B", 6), loan("A", "C", 1), loan("A", "D", 6)},
		},
	}, {
		name: "no cohort, or another cohort: no borrowing",
		specs: []Spec{
			{Name: "A", Nominal: gpu(8)},
			{Name: "B", Cohort: "c", Nominal: gpu(8)},
			{Name: "C", Cohort: "d", Nominal: gpu(8)},
		},
		steps: []op{
			{queue: "A", admit: gpu(9), fails: "room for 8"},
			{queue: "B", admit: gpu(9), fails: "room for 8"},
			{queue: "A", admit: gpu(8)},
		},
		expect: expect{headroom: map[string]int64{"A": 0, "B": 8, "C": 8}},
	}, {
		name: "flavors are separate quotas",
		specs: []Spec{
			{Name: "A", Cohort: "c", Nominal: gpu(8)},
			{Name: "B", Cohort: "c", Nominal: gpu(8).Add(GPUs(h100s, 4))},
		},
		steps: []op{
			{queue: "A", admit: GPUs(h100s, 3), loans: []Loan{{Borrower: "A", Lender: "B", Flavor: h100s, Milli: 3000}}},
			{queue: "A", admit: gpu(8)},
			{queue: "A", admit: GPUs(h100s, 2), fails: "H100-80GB/spot: need 2 GPUs, room for 1"},
		},
		expect: expect{borrowed: map[string]int64{"A": 0}, reclaimable: map[string]int64{"B": 0}, headroom: map[string]int64{"A": 8}},
	}, {
		name:  "fractions of GPUs",
		specs: pair(Spec{}, Spec{}),
		steps: []op{
			{queue: "B", admit: Amounts{h100: 7750}},
			{queue: "A", admit: Amounts{h100: 8125}, loans: []Loan{{Borrower: "A", Lender: "B", Flavor: h100, Milli: 125}}},
			{queue: "A", admit: Amounts{h100: 126}, fails: "need 0.126 GPUs, room for 0.125"},
		},
	}} {
		t.Run(sc.name, sc.run)
	}
}

func TestHierarchy(t *testing.T) {
	org := func(cohort string, nominal int64) []Spec {
		return []Spec{
			{Name: "org", Cohort: cohort, Nominal: gpu(nominal)},
			{Name: "t1", Parent: "org", Nominal: gpu(8)},
			{Name: "t2", Parent: "org", Nominal: gpu(8)},
		}
	}
	for _, sc := range []scenario{{
		name:  "a child's usage counts against its parent",
		specs: org("", 8),
		steps: []op{
			{queue: "t1", admit: gpu(6)},
			{queue: "t2", admit: gpu(3), fails: `queue "t2": H100-80GB/on-demand: need 3 GPUs, room for 2 at parent queue "org"`},
			{queue: "t2", admit: gpu(2)},
		},
		expect: expect{usage: map[string]int64{"org": 8, "t1": 6, "t2": 2}, headroom: map[string]int64{"t1": 0, "t2": 0, "org": 0}},
	}, {
		name:  "a child never exceeds its parent's nominal",
		specs: org("", 4),
		steps: []op{
			{queue: "t1", admit: gpu(5), fails: "room for 4 at parent"},
			{queue: "t1", admit: gpu(4)},
		},
		expect: expect{headroom: map[string]int64{"t1": 0, "t2": 0}},
	}, {
		name: "the parent borrows from its cohort for its child",
		specs: append(org("c", 8),
			Spec{Name: "other", Cohort: "c", Nominal: gpu(4)}),
		steps: []op{
			{queue: "t1", admit: gpu(8)},
			{queue: "t2", admit: gpu(5), fails: "room for 4 at parent"},
			{queue: "t2", admit: gpu(4), loans: []Loan{loan("org", "other", 4)}},
			{queue: "other", admit: gpu(1), fails: "4 of its nominal lent out"},
			{queue: "t2", release: gpu(1)},
		},
		expect: expect{
			usage:       map[string]int64{"org": 11, "t2": 3},
			borrowed:    map[string]int64{"org": 3, "t2": 0},
			reclaimable: map[string]int64{"other": 3},
			headroom:    map[string]int64{"other": 1, "t1": 0, "t2": 1},
			loans:       []Loan{loan("org", "other", 3)},
		},
	}, {
		name: "siblings in a cohort lend to each other under the parent",
		specs: []Spec{
			{Name: "org", Nominal: gpu(8)},
			{Name: "t1", Parent: "org", Cohort: "x", Nominal: gpu(4)},
			{Name: "t2", Parent: "org", Cohort: "x", Nominal: gpu(4), LendingLimit: gpu(3)},
			{Name: "t3", Parent: "org", Nominal: gpu(8)},
		},
		steps: []op{
			{queue: "t1", admit: gpu(8), fails: "need 8 GPUs, room for 7"},
			{queue: "t1", admit: gpu(7), loans: []Loan{loan("t1", "t2", 3)}},
			{queue: "t3", admit: gpu(2), fails: `room for 1 at parent queue "org"`},
		},
		expect: expect{
			usage:       map[string]int64{"org": 7, "t1": 7},
			reclaimable: map[string]int64{"t2": 3},
			headroom:    map[string]int64{"t2": 1, "t3": 1},
			loans:       []Loan{loan("t1", "t2", 3)},
		},
	}} {
		t.Run(sc.name, sc.run)
	}
}

func TestAdmitErrors(t *testing.T) {
	b := mustBook(t, 0,
		Spec{Name: "org", Nominal: gpu(8)},
		Spec{Name: "t", Parent: "org", Nominal: gpu(8)},
	)
	_, err := b.Admit("nope", gpu(1))
	if !errors.Is(err, ErrUnknownQueue) {
		t.Errorf("Admit to an unknown queue: %v, want ErrUnknownQueue", err)
	}
	if _, err := b.Admit("org", gpu(1)); !errors.Is(err, ErrNotLeaf) || !strings.Contains(err.Error(), `"org"`) {
		t.Errorf("Admit to a parent queue: %v, want ErrNotLeaf naming it", err)
	}
	if _, err := b.Admit("t", Amounts{h100: -1}); err == nil {
		t.Error("Admit of a negative amount succeeded")
	}
	_, err = b.Admit("t", gpu(9))
	var qe *QuotaError
	if !errors.As(err, &qe) || !errors.Is(err, ErrNoQuota) {
		t.Fatalf("Admit over quota: %v, want a *QuotaError wrapping ErrNoQuota", err)
	}
	if want := (QuotaError{Queue: "t", Level: "t", Flavor: h100, Need: 9000, Room: 8000}); *qe != want {
		t.Errorf("QuotaError = %+v, want %+v", *qe, want)
	}
	mustAdmit(t, b, "t", gpu(2))
	if err := b.Release("t", gpu(3)); err == nil || !strings.Contains(err.Error(), "uses only 2 GPUs") {
		t.Errorf("Release of more than used: %v", err)
	}
	if err := b.Release("t", Amounts{a100: 1}); err == nil {
		t.Error("Release of a flavor never admitted succeeded")
	}
	if err := b.Release("org", gpu(1)); !errors.Is(err, ErrNotLeaf) {
		t.Errorf("Release at a parent queue: %v, want ErrNotLeaf", err)
	}
	if got := b.Usage("t"); !got.Equal(gpu(2)) {
		t.Errorf("failed calls changed usage: %v", got)
	}
}

func TestBookAccessors(t *testing.T) {
	specs := []Spec{
		{Name: "z", Cohort: "c", Nominal: gpu(1)},
		{Name: "org", Cohort: "c", Nominal: gpu(8)},
		{Name: "b", Parent: "org"},
		{Name: "a", Parent: "org"},
	}
	b := mustBook(t, 0, specs...)
	specs[1].Nominal[h100] = 1 // the Book keeps its own copy
	if s, _ := b.Spec("org"); s.Nominal[h100] != 8000 {
		t.Errorf("the Book shares the caller's nominal map")
	}
	if got, want := b.Queues(), []string{"a", "b", "org", "z"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Queues = %v, want %v", got, want)
	}
	if got, want := b.Children("org"), []string{"a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Children = %v, want %v", got, want)
	}
	if got, want := b.Peers("org"), []string{"z"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Peers(org) = %v, want %v", got, want)
	}
	if got := b.Peers("a"); got != nil {
		t.Errorf("Peers(a) = %v, want none (no cohort)", got)
	}
	if _, ok := b.Spec("nope"); ok || b.Usage("nope").Total() != 0 || b.Reclaimable("nope", h100) != 0 {
		t.Error("an unknown queue has something")
	}
}

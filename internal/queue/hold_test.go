package queue

import "testing"

// Hold charges work that already runs beyond what its cohort lends: A (4)
// holds 10 where B (4) lends 4; the loans cover what B has, nothing more
// is admitted to A or lent to it, B may not take its lent quota back by
// admission either; once A releases enough, both admit again.
func TestHoldBeyondWhatTheCohortLends(t *testing.T) {
	b := mustBook(t, 0, Spec{Name: "A", Cohort: "c", Nominal: gpu(4)}, Spec{Name: "B", Cohort: "c", Nominal: gpu(4)})
	if err := b.Hold("A", gpu(10)); err != nil {
		t.Fatal(err)
	}
	if got := b.Usage("A")[h100]; got != 10*Milli {
		t.Fatalf("A uses %d, want 10000", got)
	}
	loans := b.Loans() // no panic: 2 GPUs of A's overflow are lent by nobody
	if len(loans) != 1 || loans[0] != (Loan{Borrower: "A", Lender: "B", Flavor: h100, Milli: 4 * Milli}) {
		t.Errorf("loans %+v, want B lending A its 4", loans)
	}
	for _, q := range []string{"A", "B"} {
		if err := b.CanAdmit(q, gpu(1)); err == nil {
			t.Errorf("%s may admit a GPU while A holds 2 beyond what the cohort has", q)
		}
	}
	if err := b.Release("A", gpu(3)); err != nil {
		t.Fatal(err)
	}
	if err := b.CanAdmit("B", gpu(1)); err != nil {
		t.Errorf("with A at 7 of the cohort's 8, B may not admit 1: %v", err)
	}
	if err := b.Hold("nobody", gpu(1)); err == nil {
		t.Errorf("hold in an unknown queue accepted")
	}
	if err := b.Hold("A", Amounts{h100: -1}); err == nil {
		t.Errorf("a negative hold accepted")
	}
}

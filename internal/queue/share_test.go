package queue

import (
	"cmp"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestDecayByHand checks the decayed usage against numbers worked out by
// hand with a one-hour half-life h: 8 GPUs for one hour accumulate
// 8 · (h/ln 2) · (1 - 1/2) = 14400/ln 2 GPU-seconds; three idle half-lives
// later an eighth of it is left.
func TestDecayByHand(t *testing.T) {
	b := mustBook(t, time.Hour, Spec{Name: "A", Nominal: gpu(8)}, Spec{Name: "B", Nominal: gpu(8), Weight: 2})
	mustAdmit(t, b, "A", gpu(8))
	mustAdmit(t, b, "B", gpu(8))
	mustAdvance(t, b, time.Hour)
	if got, want := b.DecayedUsage("A"), 14400/math.Ln2; !near(got, want) {
		t.Errorf("after 8 GPUs for one half-life U = %v, want 14400/ln 2 = %v", got, want)
	}
	if err := b.Release("A", gpu(8)); err != nil {
		t.Fatal(err)
	}
	if err := b.Release("B", gpu(8)); err != nil {
		t.Fatal(err)
	}
	mustAdvance(t, b, 4*time.Hour)
	if got, want := b.DecayedUsage("A"), 1800/math.Ln2; !near(got, want) {
		t.Errorf("three idle half-lives later U = %v, want 1800/ln 2 = %v", got, want)
	}
	// Share = U / (Weight · nominal GPUs).
	if got, want := b.Share("A"), 1800/math.Ln2/8; !near(got, want) {
		t.Errorf("Share(A) = %v, want %v", got, want)
	}
	if got, want := b.Share("B"), 1800/math.Ln2/16; !near(got, want) {
		t.Errorf("Share(B) with weight 2 = %v, want %v", got, want)
	}
	// Steady use of the whole nominal quota converges to h/ln 2 / Weight.
	mustAdmit(t, b, "A", gpu(8))
	mustAdvance(t, b, 64*time.Hour)
	if got, want := b.Share("A"), 3600/math.Ln2; !near(got, want) {
		t.Errorf("after 60 half-lives of full use Share = %v, want h/ln 2 = %v", got, want)
	}
}

func TestAdvanceInSteps(t *testing.T) {
	one := mustBook(t, time.Hour, Spec{Name: "A", Nominal: gpu(8)})
	many := mustBook(t, time.Hour, Spec{Name: "A", Nominal: gpu(8)})
	mustAdmit(t, one, "A", Amounts{h100: 2500})
	mustAdmit(t, many, "A", Amounts{h100: 2500})
	mustAdvance(t, one, 150*time.Minute)
	for m := time.Duration(0); m <= 150; m += 7 {
		mustAdvance(t, many, m*time.Minute)
	}
	mustAdvance(t, many, 150*time.Minute)
	if a, b := one.DecayedUsage("A"), many.DecayedUsage("A"); !near(a, b) {
		t.Errorf("one step %v, many steps %v", a, b)
	}
	if err := many.Advance(time.Hour); err == nil {
		t.Error("Advance back in time succeeded")
	}
	if many.Now() != 150*time.Minute {
		t.Errorf("Now = %v", many.Now())
	}
}

// use is a queue's usage over an interval, in H100s.
type use struct {
	queue      string
	gpus       int64
	from, till time.Duration
}

// replay admits and releases uses in time order, then advances to at.
func replay(t *testing.T, b *Book, uses []use, at time.Duration) {
	t.Helper()
	type event struct {
		at    time.Duration
		queue string
		gpus  int64 // negative: release
	}
	var events []event
	for _, u := range uses {
		events = append(events, event{u.from, u.queue, u.gpus}, event{u.till, u.queue, -u.gpus})
	}
	slices.SortStableFunc(events, func(x, y event) int { return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.gpus, y.gpus)) })
	for _, e := range events {
		if e.at > at {
			break
		}
		mustAdvance(t, b, e.at)
		if e.gpus > 0 {
			mustAdmit(t, b, e.queue, gpu(e.gpus))
		} else if err := b.Release(e.queue, gpu(-e.gpus)); err != nil {
			t.Fatal(err)
		}
	}
	mustAdvance(t, b, at)
}

func TestFairShareOrder(t *testing.T) {
	h := time.Hour
	two := func(weightA float64, nominalA int64) []Spec {
		return []Spec{
			{Name: "A", Nominal: gpu(nominalA), Weight: weightA},
			{Name: "B", Nominal: gpu(8)},
		}
	}
	for _, c := range []struct {
		name  string
		specs []Spec
		uses  []use
		at    time.Duration
		want  []string
	}{{
		name:  "equal weights: the queue that used less goes first",
		specs: two(1, 8),
		uses:  []use{{"A", 8, 0, h}, {"B", 2, 0, h}},
		at:    h,
		want:  []string{"B", "A"},
	}, {
		name:  "recent use counts more than old use",
		specs: two(1, 8),
		// At 4h: A has (8·h/ln2·½)/8 = 1800/ln2 GPU-s left, B 4·h/ln2·½ = 7200/ln2.
		uses: []use{{"A", 8, 0, h}, {"B", 4, 3 * h, 4 * h}},
		at:   4 * h,
		want: []string{"A", "B"},
	}, {
		name:  "no use yet: ties by name",
		specs: two(1, 8),
		at:    h,
		want:  []string{"A", "B"},
	}, {
		name:  "equal weights, 6 against 4 GPUs",
		specs: two(1, 8),
		uses:  []use{{"A", 6, 0, h}, {"B", 4, 0, h}},
		at:    h,
		want:  []string{"B", "A"},
	}, {
		name:  "weights 2:1 turn it round: 6/2 < 4/1",
		specs: two(2, 8),
		uses:  []use{{"A", 6, 0, h}, {"B", 4, 0, h}},
		at:    h,
		want:  []string{"A", "B"},
	}, {
		name:  "usage is relative to nominal quota: 8 of 16 < 6 of 8",
		specs: two(1, 16),
		uses:  []use{{"A", 8, 0, h}, {"B", 6, 0, h}},
		at:    h,
		want:  []string{"A", "B"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			b := mustBook(t, h, c.specs...)
			replay(t, b, c.uses, c.at)
			for _, in := range [][]string{{"A", "B"}, {"B", "A"}} {
				got, err := b.Order(in)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Errorf("Order(%v) = %v, want %v (shares A %v, B %v)", in, got, c.want, b.Share("A"), b.Share("B"))
				}
			}
		})
	}
}

// TestFairTree: siblings are compared only with siblings. org1 used 6 GPUs
// through a1 and a2 idled; org2 used 4 through b1. Flat, a2 (share 0) would
// come first; in the tree org2 (4/8) beats org1 (6/8), so b1 does.
func TestFairTree(t *testing.T) {
	b := mustBook(t, time.Hour,
		Spec{Name: "org1", Nominal: gpu(8)},
		Spec{Name: "a1", Parent: "org1", Nominal: gpu(8)},
		Spec{Name: "a2", Parent: "org1", Nominal: gpu(8)},
		Spec{Name: "org2", Nominal: gpu(8)},
		Spec{Name: "b1", Parent: "org2", Nominal: gpu(8)},
	)
	replay(t, b, []use{{"a1", 6, 0, time.Hour}, {"b1", 4, 0, time.Hour}}, time.Hour)
	got, err := b.Order([]string{"a1", "a2", "b1", "org1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b1", "org1", "a2", "a1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Order = %v, want %v", got, want)
	}
	if _, err := b.Order([]string{"nope"}); !errors.Is(err, ErrUnknownQueue) {
		t.Errorf("Order of an unknown queue: %v", err)
	}
}

// A queue whose nominal quota is no real limit is measured against the
// size it may fill: equal use over equal sizes, equal shares.
func TestShareGPUsSetsTheMeasure(t *testing.T) {
	f := Flavor{Model: "gpu", Capacity: "any"}
	b, err := NewBook([]Spec{
		{Name: "capped", Nominal: GPUs(f, 8)},
		{Name: "uncapped", Nominal: GPUs(f, 1<<30), ShareGPUs: 8},
	}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"capped", "uncapped"} {
		if _, err := b.Admit(q, GPUs(f, 4)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Advance(time.Hour); err != nil {
		t.Fatal(err)
	}
	if a, u := b.Share("capped"), b.Share("uncapped"); a != u || a == 0 {
		t.Fatalf("shares %v and %v, want equal and positive", a, u)
	}
	if _, err := NewBook([]Spec{{Name: "bad", ShareGPUs: -1}}, 0); err == nil {
		t.Fatal("a negative ShareGPUs was accepted")
	}
}

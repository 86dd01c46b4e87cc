package queue

import (
	"testing"
	"time"
)

var (
	h100  = Flavor{Model: "H100-80GB", Capacity: "on-demand"}
	h100s = Flavor{Model: "H100-80GB", Capacity: "spot"}
	a100  = Flavor{Model: "A100-40GB", Capacity: "on-demand"}
)

// gpu is n whole H100s.
func gpu(n int64) Amounts { return GPUs(h100, n) }

func mustBook(t testing.TB, halfLife time.Duration, specs ...Spec) *Book {
	t.Helper()
	b, err := NewBook(specs, halfLife)
	if err != nil {
		t.Fatalf("NewBook: %v", err)
	}
	return b
}

func mustAdmit(t testing.TB, b *Book, queue string, need Amounts) Admission {
	t.Helper()
	a, err := b.Admit(queue, need)
	if err != nil {
		t.Fatalf("Admit(%q, %v): %v", queue, need, err)
	}
	return a
}

func mustAdvance(t testing.TB, b *Book, now time.Duration) {
	t.Helper()
	if err := b.Advance(now); err != nil {
		t.Fatal(err)
	}
}

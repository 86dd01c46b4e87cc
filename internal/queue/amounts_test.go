package queue

import (
	"slices"
	"testing"
)

func TestAmounts(t *testing.T) {
	a := Amounts{h100: 8000, a100: 500, h100s: 0}
	b := Amounts{h100: 3000, h100s: 250}
	if got, want := a.Flavors(), []Flavor{a100, h100}; !slices.Equal(got, want) {
		t.Errorf("Flavors = %v, want %v (zero entries left out, model then capacity)", got, want)
	}
	if got, want := a.Add(b), (Amounts{h100: 11000, a100: 500, h100s: 250}); !got.Equal(want) || len(got) != 3 {
		t.Errorf("Add = %v, want %v", got, want)
	}
	if got, want := a.Sub(b), (Amounts{h100: 5000, a100: 500, h100s: -250}); !got.Equal(want) {
		t.Errorf("Sub = %v, want %v", got, want)
	}
	if got := a.Sub(a); len(got) != 0 {
		t.Errorf("a - a = %v, want no entries", got)
	}
	if a[h100] != 8000 || b[h100] != 3000 {
		t.Errorf("Add or Sub changed an operand: %v %v", a, b)
	}
	for _, c := range []struct {
		x, limit Amounts
		want     bool
	}{
		{b, a, false}, // spot 250 > 0
		{Amounts{h100: 8000}, a, true},
		{Amounts{h100: 8001}, a, false},
		{nil, nil, true},
		{Amounts{h100: 0}, nil, true},
		{Amounts{h100: -1}, nil, true},
	} {
		if got := c.x.Fits(c.limit); got != c.want {
			t.Errorf("%v.Fits(%v) = %v, want %v", c.x, c.limit, got, c.want)
		}
	}
	if got, want := (Amounts{h100: 8000, a100: 500, h100s: 1250}).String(), "A100-40GB/on-demand=0.5 H100-80GB/on-demand=8 H100-80GB/spot=1.25"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got := GPUs(h100, 3); got[h100] != 3*Milli || len(got) != 1 {
		t.Errorf("GPUs(h100, 3) = %v", got)
	}
}

package queue

import "testing"

func TestJain(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 1, 1, 1}, 1},
		{[]float64{0.5, 0.5}, 1},
		{[]float64{1, 0, 0, 0}, 0.25}, // 1² / (4 · 1)
		{[]float64{2, 1}, 0.9},        // 3² / (2 · 5)
		{[]float64{1, 2, 3}, 6.0 / 7}, // 6² / (3 · 14)
		{[]float64{3, 1, 0, 0}, 0.4},  // 4² / (4 · 10)
		{nil, 1},
		{[]float64{0, 0}, 1},
	} {
		if got := Jain(c.xs); !near(got, c.want) {
			t.Errorf("Jain(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	// Tenant a got all it is entitled to, b half, c is entitled to nothing
	// and is left out: ratios [1 0.5], index 1.5² / (2 · 1.25) = 0.9.
	xs := Ratios(map[string]float64{"a": 4, "b": 2, "c": 3}, map[string]float64{"b": 4, "a": 4, "c": 0})
	if len(xs) != 2 || xs[0] != 1 || xs[1] != 0.5 {
		t.Errorf("Ratios = %v, want [1 0.5]", xs)
	}
	if got := Jain(xs); !near(got, 0.9) {
		t.Errorf("Jain(Ratios) = %v, want 0.9", got)
	}
}

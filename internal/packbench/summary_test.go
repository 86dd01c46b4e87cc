package packbench

import (
	"math"
	"testing"
)

// binMean keeps the authors' window of one bin each side, and widens it
// only where records lie beyond it (a small cluster, where one pod moves
// the arrived % by several bins); a trace that ended before x stays NaN.
func TestBinMean(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name  string
		count []int
		x     int
		want  float64
	}{
		{"the bin itself", []int{0, 2, 1, 0, 0, 0}, 2, 20},
		{"one each side", []int{0, 1, 0, 1, 0, 0}, 2, 20},
		{"a gap of two bins each side, records beyond", []int{1, 0, 0, 0, 1, 0}, 2, 20},
		{"widened to the nearest side only", []int{0, 0, 0, 0, 1, 0}, 1, 40},
		{"the trace ended before x", []int{1, 0, 0, 0, 0, 0}, 3, nan},
	} {
		t.Run(c.name, func(t *testing.T) {
			sum := make([]float64, len(c.count))
			for i, n := range c.count {
				sum[i] = float64(n) * float64(10*i) // every record of bin i is 10*i
			}
			got := binMean(sum, c.count, c.x)
			if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-c.want) > 1e-9 {
				t.Errorf("binMean(%v, x=%d) = %v, want %v", c.count, c.x, got, c.want)
			}
		})
	}
}

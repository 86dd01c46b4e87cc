package svg

import (
	"math"
	"slices"
	"testing"
)

// The expected ticks were worked out by hand: raw step = (hi-lo)/n, written
// as e·10^k with 1 <= e < 10, becomes 1 below √2 ≈ 1.41, 2 below √10 ≈ 3.16,
// 5 below √50 ≈ 7.07 and 10 from there.
func TestNiceTicks(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		lo, hi float64
		n      int
		want   []float64
		exp    int
	}{
		{"raw 2 gives step 2", 0, 10, 5, []float64{0, 2, 4, 6, 8, 10}, 0},
		{"raw 0.2 gives step 0.2", 0, 1, 5, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, -1},
		{"raw 20 gives step 20", 0, 100, 5, []float64{0, 20, 40, 60, 80, 100}, 1},
		{"raw 0.5 gives step 0.5", -1, 1, 4, []float64{-1, -0.5, 0, 0.5, 1}, -1},
		{"raw 0.53 gives 0.5, ends inside", 0.5, 3.7, 6, []float64{0.5, 1, 1.5, 2, 2.5, 3, 3.5}, -1},
		{"raw 10 at a power of ten", 100, 130, 3, []float64{100, 110, 120, 130}, 1},
		{"raw 1000 at a power of ten", 0, 3000, 3, []float64{0, 1000, 2000, 3000}, 3},
		{"raw 3.5 rounds up to 5", 0, 7, 2, []float64{0, 5}, 0},
		{"raw 3 rounds down to 2", 0, 6, 2, []float64{0, 2, 4, 6}, 0},
		{"raw 1.4 rounds down to 1", 0, 2.8, 2, []float64{0, 1, 2}, 0},
		{"raw 7.5 rounds up to 10", 0, 15, 2, []float64{0, 10}, 1},
		{"negative range", -37, -12, 5, []float64{-35, -30, -25, -20, -15}, 0},
		{"millions", 0, 2.5e6, 5, []float64{0, 5e5, 1e6, 1.5e6, 2e6, 2.5e6}, 5},
		{"small decimals", 0.01, 0.05, 4, []float64{0.01, 0.02, 0.03, 0.04, 0.05}, -2},
		{"padded data range", -4, 104, 5, []float64{0, 20, 40, 60, 80, 100}, 1},
		{"empty range", 3, 3, 5, nil, 0},
		{"reversed range", 10, 0, 5, nil, 0},
		{"NaN bound", nan, 1, 5, nil, 0},
		{"infinite bound", 0, math.Inf(1), 5, nil, 0},
		{"no ticks wanted", 0, 1, 0, nil, 0},
		{"too narrow for float64", 1e17, 1e17 + 64, 4, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, exp := niceTicks(tt.lo, tt.hi, tt.n)
			if !slices.Equal(got, tt.want) || exp != tt.exp {
				t.Errorf("niceTicks(%v, %v, %d) = %v, 10^%d; want %v, 10^%d", tt.lo, tt.hi, tt.n, got, exp, tt.want, tt.exp)
			}
		})
	}
}

func TestTickLabels(t *testing.T) {
	tests := []struct {
		name  string
		ticks []float64
		exp   int
		want  []string
	}{
		{"integers", []float64{0, 20, 40}, 1, []string{"0", "20", "40"}},
		{"one decimal throughout", []float64{0, 0.5, 1, 1.5}, -1, []string{"0", "0.5", "1.0", "1.5"}},
		{"two decimals", []float64{0.01, 0.02}, -2, []string{"0.01", "0.02"}},
		{"negative", []float64{-10, -5, 0}, 0, []string{"-10", "-5", "0"}},
		{"thousands stay plain", []float64{0, 50000, 100000}, 4, []string{"0", "50000", "100000"}},
		{"millions get M", []float64{0, 5e5, 1e6, 1.5e6}, 5, []string{"0", "0.5M", "1.0M", "1.5M"}},
		{"whole millions", []float64{2e6, 4e6}, 6, []string{"2M", "4M"}},
		{"billions get G", []float64{-2e9, 0, 2e9}, 9, []string{"-2G", "0", "2G"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tickLabels(tt.ticks, tt.exp); !slices.Equal(got, tt.want) {
				t.Errorf("tickLabels(%v, %d) = %q, want %q", tt.ticks, tt.exp, got, tt.want)
			}
		})
	}
}

func TestNum(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {12, "12"}, {12.5, "12.5"}, {12.345, "12.35"}, {-0.001, "0"}, {-3.1, "-3.1"}, {100, "100"},
	}
	for _, tt := range tests {
		if got := num(tt.v); got != tt.want {
			t.Errorf("num(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

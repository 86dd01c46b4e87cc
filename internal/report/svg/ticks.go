package svg

import (
	"math"
	"strconv"
)

// niceTicks returns tick values covering [lo, hi] about n apart, spaced by a
// "nice" step of 1, 2 or 5 times a power of ten, and that power (the step is
// m·10^exp). The thresholds between steps are the geometric means of
// neighbouring steps (√2, √10, √50), so the count of ticks stays close to n.
// It returns nil when lo >= hi, either is not finite, n < 1, or the range is
// too narrow for float64 to place distinct ticks.
func niceTicks(lo, hi float64, n int) (ticks []float64, exp int) {
	if n < 1 || !finite(lo) || !finite(hi) || !(lo < hi) || !finite(hi-lo) {
		return nil, 0
	}
	m, exp := niceStep((hi - lo) / float64(n))
	step := float64(m) * math.Pow10(exp)
	first := math.Ceil(lo/step - 1e-9)
	last := math.Floor(hi/step + 1e-9)
	// Below 12 significant digits ticks would print alike, or not be
	// representable at all; this also keeps first and last within int64.
	if !(step > 1e-12*math.Max(math.Abs(lo), math.Abs(hi))) || last-first > float64(10*n+10) {
		return nil, 0
	}
	for i := int64(first); i <= int64(last); i++ {
		ticks = append(ticks, decimal(i*m, exp))
	}
	return ticks, exp
}

// niceStep rounds raw > 0 to m·10^exp with m in {1, 2, 5}.
func niceStep(raw float64) (m int64, exp int) {
	exp = int(math.Floor(math.Log10(raw)))
	// Log10 may be off by one ulp at powers of ten; fix the exponent.
	if math.Pow10(exp+1) <= raw {
		exp++
	} else if math.Pow10(exp) > raw {
		exp--
	}
	e := raw / math.Pow10(exp)
	switch {
	case e >= math.Sqrt(50):
		return 1, exp + 1
	case e >= math.Sqrt(10):
		return 5, exp
	case e >= math.Sqrt(2):
		return 2, exp
	}
	return 1, exp
}

// decimal returns k·10^exp, dividing for negative exp so that, for example,
// 3·10^-1 is 0.3 and not 0.30000000000000004.
func decimal(k int64, exp int) float64 {
	if exp < 0 {
		return float64(k) / math.Pow10(-exp)
	}
	return float64(k) * math.Pow10(exp)
}

// tickLabels formats ticks spaced by m·10^exp with as many decimals as the
// step needs, the same for every label of an axis. When the largest tick
// reaches a million, labels are scaled and suffixed with M or G (2.5M).
// Zero is always "0".
func tickLabels(ticks []float64, exp int) []string {
	big := 0.0
	for _, v := range ticks {
		big = math.Max(big, math.Abs(v))
	}
	scale, suffix := 0, ""
	switch {
	case big >= 1e9:
		scale, suffix = 9, "G"
	case big >= 1e6:
		scale, suffix = 6, "M"
	}
	decimals := max(0, scale-exp)
	labels := make([]string, len(ticks))
	for i, v := range ticks {
		if v == 0 {
			labels[i] = "0"
			continue
		}
		labels[i] = strconv.FormatFloat(v/math.Pow10(scale), 'f', decimals, 64) + suffix
	}
	return labels
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

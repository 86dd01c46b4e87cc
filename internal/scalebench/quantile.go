package scalebench

import (
	"math"
	"slices"
	"time"
)

// sortedDurations are durations in increasing order, for nearest-rank
// quantiles in milliseconds.
type sortedDurations []time.Duration

func quantiles(d []time.Duration) sortedDurations {
	s := slices.Clone(d)
	slices.Sort(s)
	return s
}

// at is the nearest-rank q-quantile in milliseconds, 0 for no samples.
func (s sortedDurations) at(q float64) float64 {
	if len(s) == 0 {
		return 0
	}
	i := max(int(math.Ceil(q*float64(len(s))))-1, 0)
	return float64(s[min(i, len(s)-1)]) / float64(time.Millisecond)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

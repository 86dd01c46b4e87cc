package faultrec

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Summary is one line about the faults handled: how many of each kind,
// what was done, the GPU-hours lost and the median time from the fault to
// the decision; "" for none.
func Summary(rs []Record) string {
	if len(rs) == 0 {
		return ""
	}
	kinds := map[string]int{}
	replaced, requeued := 0, 0
	var lost float64
	var recovery []float64
	for _, r := range rs {
		kinds[r.Kind]++
		switch r.Action {
		case Replaced:
			replaced++
		case Requeued:
			requeued++
		}
		lost += r.LostGPUHours
		recovery = append(recovery, r.RecoverySeconds)
	}
	var parts []string
	for _, k := range []string{NodeFailure, GPUFault, SpotNotice, Maintenance} {
		if kinds[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, kinds[k]))
		}
	}
	slices.Sort(recovery)
	median := time.Duration(recovery[len(recovery)/2] * float64(time.Second)).Round(time.Millisecond)
	return fmt.Sprintf("%d stopped or moved by faults (%s): %d moved to a spare or free node, %d requeued; %.1f GPU-hours lost; decided %v after the fault (median)",
		len(rs), strings.Join(parts, ", "), replaced, requeued, lost, median)
}

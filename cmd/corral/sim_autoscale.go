package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/sim"
)

// autoscaleOptions turns --autoscale MIN:MAX into one autoscaler per pool
// of the fleet.
func autoscaleOptions(o simOptions, f *fleet.Fleet) ([]sim.Autoscale, error) {
	if o.autoscale == "" {
		return nil, nil
	}
	lo, hi, ok := strings.Cut(o.autoscale, ":")
	minNodes, err := strconv.Atoi(lo)
	if !ok || err != nil || minNodes < 0 {
		return nil, fmt.Errorf("--autoscale %q: want MIN:MAX nodes per pool, e.g. 0:64, or 0: for every node", o.autoscale)
	}
	pools := map[string]int{}
	for _, n := range f.Nodes {
		pools[n.Pool]++
	}
	names := make([]string, 0, len(pools))
	for p := range pools {
		names = append(names, p)
	}
	sort.Strings(names)
	var out []sim.Autoscale
	for _, p := range names {
		maxNodes := pools[p]
		if hi != "" {
			if maxNodes, err = strconv.Atoi(hi); err != nil || maxNodes < minNodes {
				return nil, fmt.Errorf("--autoscale %q: MAX must be a number of nodes at least MIN", o.autoscale)
			}
		}
		out = append(out, sim.Autoscale{Pool: p, Min: min(minNodes, pools[p]), Max: maxNodes,
			ProvisionDelay: o.provisionDelay, ScaleDownAfter: o.scaleDownAfter})
	}
	return out, nil
}

// writeAutoscaling says what each policy's autoscaling bought.
func writeAutoscaling(w io.Writer, f *fleet.Fleet, results []*sim.Result) {
	fmt.Fprintln(w, "\nautoscaling: GPU-hours bought (nodes there or joining) against the fixed fleet over the same makespan")
	for _, r := range results {
		s := r.Summary
		fixed := float64(f.GPUs()) * s.MakespanH
		share := 0.0
		if fixed > 0 {
			share = 100 * s.BoughtGPUHours / fixed
		}
		fmt.Fprintf(w, "  %-15s %10.0f GPU-h bought, %5.1f%% of %.0f; %d nodes joined, %d left\n", r.Policy, s.BoughtGPUHours, share, fixed, s.ScaleUps, s.ScaleDowns)
	}
}

package commit

import (
	"cmp"
	"fmt"
	"slices"
)

// Bill applies c to the usage hour by hour, as a discount: each hour the
// commitment covers eligible usage up to its amount, in any node, and the
// rest runs at the model's on-demand price; unused commitment is paid. A
// spend commitment covers the usage with the highest saving first (the
// order AWS applies Savings Plans in: the highest savings percentage, then
// the lowest committed rate); a GPU commitment covers the dearest usage on
// demand first. Usage out of scope is left out of the statement. Series shorter than the longest are zero in the hours they
// lack.
func Bill(c Commitment, usage []Usage, rates map[string]Rate) (Statement, error) {
	if err := c.check(); err != nil {
		return Statement{}, err
	}
	in, hours, err := eligible(c, usage, rates)
	if err != nil {
		return Statement{}, err
	}
	s := Statement{Kind: c.Kind, Hours: hours}
	coveredOD := 0.0 // on-demand value of the covered usage
	for h := 0; h < hours; h++ {
		gpus, usd := c.GPUs, c.USDPerHour
		for _, u := range in {
			g := at(u.GPUs, h)
			r := rates[u.Model]
			s.UsageGPUH += g
			s.OnDemandUSD += g * r.OnDemand
			var covered float64
			if c.USDPerHour > 0 {
				covered = min(g, max(usd, 0)/r.Committed)
				usd -= covered * r.Committed
			} else {
				covered = min(g, gpus)
				gpus -= covered
			}
			s.CoveredGPUH += covered
			coveredOD += covered * r.OnDemand
			s.OverflowUSD += (g - covered) * r.OnDemand
		}
		s.UnusedGPUH += gpus
		s.UnusedUSD += max(usd, 0) + gpus*c.USDPerGPUHour
	}
	s.OverflowGPUH = s.UsageGPUH - s.CoveredGPUH
	s.CommittedGPUH = c.GPUs * float64(hours)
	s.CommitmentUSD = (c.GPUs*c.USDPerGPUHour + c.USDPerHour) * float64(hours)
	s.finish(coveredOD, c.USDPerHour > 0)
	return s, nil
}

// finish totals a statement and derives coverage and utilisation.
func (s *Statement) finish(coveredOD float64, spend bool) {
	s.TotalUSD = s.CommitmentUSD + s.OverflowUSD
	s.SavingUSD = s.OnDemandUSD - s.TotalUSD
	s.Coverage, s.Utilisation = 0, 0
	switch {
	case spend && s.OnDemandUSD > 0:
		s.Coverage = coveredOD / s.OnDemandUSD
	case !spend && s.UsageGPUH > 0:
		s.Coverage = s.CoveredGPUH / s.UsageGPUH
	}
	if s.CommitmentUSD > 0 {
		s.Utilisation = 1 - s.UnusedUSD/s.CommitmentUSD
	}
}

// eligible is the usage in c's scope, in the order c covers it, and the
// hours of the usage. A model in scope without a rate is an error.
func eligible(c Commitment, usage []Usage, rates map[string]Rate) ([]Usage, int, error) {
	var in []Usage
	hours := 0
	for _, u := range usage {
		hours = max(hours, len(u.GPUs))
		if !c.inScope(u.Model) {
			continue
		}
		r, ok := rates[u.Model]
		if !ok || r.OnDemand <= 0 || (c.USDPerHour > 0 && r.Committed <= 0) {
			return nil, 0, fmt.Errorf("commitment: no on-demand and committed rate for %s, which is in its scope", u.Model)
		}
		for h, g := range u.GPUs {
			if g < 0 {
				return nil, 0, fmt.Errorf("commitment: usage of %s in hour %d is %g GPUs", u.Model, h, g)
			}
		}
		in = append(in, u)
	}
	slices.SortStableFunc(in, func(a, b Usage) int {
		ra, rb := rates[a.Model], rates[b.Model]
		if c.USDPerHour > 0 {
			return cmp.Or(cmp.Compare(ra.Committed/ra.OnDemand, rb.Committed/rb.OnDemand), cmp.Compare(ra.Committed, rb.Committed))
		}
		return cmp.Compare(rb.OnDemand, ra.OnDemand)
	})
	return in, hours, nil
}

func at(s []float64, h int) float64 {
	if h < len(s) {
		return s[h]
	}
	return 0
}

// Nodes bills a capacity commitment of gpus GPUs (nodes that were always
// there) from a replay: used[h] is the GPUs occupied on its nodes in hour
// h, overflow[h] the GPUs bought on demand beside them, rate and onDemand
// the prices per GPU-hour. Usage is what ran on the committed nodes plus
// the on-demand GPUs, so coverage is the committed nodes' share of it.
func Nodes(gpus, rate, onDemand float64, used, overflow []float64) Statement {
	s := Statement{Kind: Capacity, Hours: max(len(used), len(overflow))}
	for h := 0; h < s.Hours; h++ {
		u, o := min(at(used, h), gpus), at(overflow, h)
		s.CoveredGPUH += u
		s.OverflowGPUH += o
		s.UnusedGPUH += gpus - u
	}
	s.UsageGPUH = s.CoveredGPUH + s.OverflowGPUH
	s.CommittedGPUH = gpus * float64(s.Hours)
	s.CommitmentUSD = s.CommittedGPUH * rate
	s.UnusedUSD = s.UnusedGPUH * rate
	s.OverflowUSD = s.OverflowGPUH * onDemand
	s.OnDemandUSD = s.UsageGPUH * onDemand
	s.finish(0, false)
	return s
}

// Level is one amount of a commitment and its bill.
type Level struct {
	GPUs      float64   `json:"gpus"`
	Statement Statement `json:"statement"`
}

// Best bills c at every GPU level from 0 to max in steps of step and
// returns the cheapest (the lowest on a tie) and every level's bill: a
// brute-force search, one Bill per level.
func Best(c Commitment, usage []Usage, rates map[string]Rate, maxGPUs, step float64) (Level, []Level, error) {
	if step <= 0 {
		return Level{}, nil, fmt.Errorf("commitment: step %g must be positive", step)
	}
	var all []Level
	best := -1
	for i := 0; float64(i)*step <= maxGPUs+1e-9; i++ {
		c.GPUs, c.USDPerHour = float64(i)*step, 0
		s, err := Bill(c, usage, rates)
		if err != nil {
			return Level{}, nil, err
		}
		all = append(all, Level{GPUs: c.GPUs, Statement: s})
		if best < 0 || s.TotalUSD < all[best].Statement.TotalUSD-1e-9*s.TotalUSD {
			best = len(all) - 1
		}
	}
	return all[best], all, nil
}

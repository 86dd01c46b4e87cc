package plan

import (
	"fmt"
	"math"

	"github.com/corral-sched/corral/internal/cost/price"
)

// Purchase is a model's plan in the units it is bought in: whole
// instances of the offer, beyond the GPUs already committed (held), and
// the hourly commitment and term obligation they make.
type Purchase struct {
	Instance        string `json:"instance"`
	GPUsPerInstance int    `json:"gpus_per_instance"`
	HeldGPUs        int    `json:"held_gpus"`
	Instances       int    `json:"instances_to_buy"`
	GPUs            int    `json:"gpus_to_buy"`
	CommittedGPUs   int    `json:"committed_gpus"` // held + bought
	// CostUSD is the demand's cost over the sample at CommittedGPUs, the
	// held commitment included; above the fractional plan's cost when
	// whole instances round the level.
	CostUSD float64 `json:"cost_usd"`
	// CommitUSDPerHour is what the bought GPUs cost an hour at the
	// committed rate, used or not: the hourly commitment of a Savings
	// Plan or the hourly price of the reserved instances.
	CommitUSDPerHour float64 `json:"commitment_usd_per_hour"`
	TermHours        float64 `json:"term_hours"`
	// TermObligationUSD is CommitUSDPerHour over the whole term: what
	// signing commits to pay.
	TermObligationUSD float64 `json:"term_obligation_usd"`
	// TermCostUSD is the sample's cost scaled to the term, the demand
	// taken to repeat; Extrapolation says so in words.
	TermCostUSD   float64 `json:"term_cost_usd"`
	SampleHours   int     `json:"sample_hours"`
	Extrapolation string  `json:"extrapolation"`
	Note          string  `json:"note,omitempty"`
}

// termHours is the hours of a term; a block is bought for the sample's
// window itself.
func termHours(term price.Capacity, sample int) float64 {
	switch term {
	case price.Reserved1y:
		return 8760
	case price.Reserved3y:
		return 3 * 8760
	}
	return float64(sample)
}

// purchase finds the cheapest level of whole instances at or above held:
// held plus k instances, for every k up to the peak, priced on the exact
// curve (one point per level up to the peak; levels above it pay only the
// commitment, as no demand is over them).
func purchase(curve []Point, r Rates, hours int, ps Prices, held int, term price.Capacity) Purchase {
	g := max(ps.GPUsPerInstance, 1)
	costAt := func(c int) float64 {
		if c < len(curve) {
			return curve[c].CostUSD
		}
		return float64(c) * r.Committed * float64(hours)
	}
	peak := len(curve) - 1
	best, bestCost := 0, costAt(held)
	for k := 1; held+(k-1)*g < peak; k++ {
		if c := costAt(held + k*g); c < bestCost-1e-9*math.Abs(c) {
			best, bestCost = k, c
		}
	}
	p := Purchase{Instance: ps.Committed.Instance, GPUsPerInstance: g, HeldGPUs: held, Instances: best, GPUs: best * g,
		CommittedGPUs: held + best*g, CostUSD: bestCost, SampleHours: hours, TermHours: termHours(term, hours)}
	p.CommitUSDPerHour = float64(p.GPUs) * r.Committed
	p.TermObligationUSD = p.CommitUSDPerHour * p.TermHours
	p.TermCostUSD = bestCost * p.TermHours / float64(max(hours, 1))
	p.Extrapolation = extrapolation(hours, term)
	if held > 0 && best == 0 && held > optimumLevel(curve) {
		p.Note = fmt.Sprintf("the %d GPUs held are above the best level (%d): buy nothing", held, optimumLevel(curve))
	}
	return p
}

// optimumLevel is the cheapest level of a curve (the lowest on a tie).
func optimumLevel(curve []Point) int {
	best := 0
	for i, p := range curve {
		if p.CostUSD < curve[best].CostUSD-1e-9*math.Abs(p.CostUSD) {
			best = i
		}
	}
	return best
}

// extrapolation says how the sample stands for the term: "28 days of
// demand extrapolated to 1 year (the sample taken 13.0 times)".
func extrapolation(hours int, term price.Capacity) string {
	sample := fmt.Sprintf("%d hours", hours)
	if hours%24 == 0 {
		sample = fmt.Sprintf("%d days", hours/24)
	}
	var name string
	switch term {
	case price.Reserved1y:
		name = "1 year"
	case price.Reserved3y:
		name = "3 years"
	default:
		return sample + " of demand, the block's window: nothing extrapolated"
	}
	return fmt.Sprintf("%s of demand extrapolated to %s (the sample taken %.1f times): a year has seasons and growth a sample does not show", sample, name,
		termHours(term, hours)/float64(max(hours, 1)))
}

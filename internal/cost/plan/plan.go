package plan

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/cost/commit"
	"github.com/corral-sched/corral/internal/cost/price"
)

// Options choose the commitment and the prices.
type Options struct {
	Term      price.Capacity    // price.Reserved1y, price.Reserved3y or price.ReservedBlock
	SpotShare float64           // share of overflow run on spot, 0..1
	Families  map[string]string // GPU model -> family or instance; missing: the catalog's first offer
	Growth    []float64         // demand changes to test, e.g. 0.1 and -0.1; nil: ±10%
	// Now is the day prices are aged on: a price past its validity on Now
	// is expired, one older than price.MaxAge stale.
	Now time.Time
	// AllowExpired lets a plan buy on an expired price (said in the
	// plan's warnings); without it a model whose only prices are expired
	// is not planned, and the reason says so.
	AllowExpired bool
	// Held is the GPUs of each model already committed (under the same
	// term): the plan buys the difference. The key "" stands for the one
	// model of a one-model demand.
	Held map[string]int
}

// Prices are the per-GPU-hour prices a model's plan used.
type Prices struct {
	Committed price.Price  `json:"committed"`
	OnDemand  price.Price  `json:"on_demand"`
	Spot      *price.Price `json:"spot,omitempty"`
	// GPUsPerInstance is the offer's GPUs in one instance, the unit the
	// commitment is bought in.
	GPUsPerInstance int `json:"gpus_per_instance"`
}

// Sensitivity is what a change in demand does to the plan.
type Sensitivity struct {
	Growth        float64 `json:"growth"`          // +0.1: every hour's demand 10% higher
	BestLevel     int     `json:"best_level"`      // the cheapest level for the changed demand
	BestCostUSD   float64 `json:"best_cost_usd"`   // its cost
	KeptCostUSD   float64 `json:"kept_cost_usd"`   // the cost of keeping the recommended level
	RegretUSD     float64 `json:"regret_usd"`      // kept - best
	KeptLevelUsed int     `json:"kept_level_used"` // the recommended level, for reference
}

// ModelPlan is the commitment plan of one GPU model.
type ModelPlan struct {
	Model            string  `json:"gpu_model"`
	Hours            int     `json:"hours"`
	GPUHours         float64 `json:"demand_gpu_hours"`
	PeakGPUs         float64 `json:"peak_gpus"`
	Prices           Prices  `json:"prices"`
	OverflowUSD      float64 `json:"overflow_usd_per_gpu_hour"`
	BreakEven        float64 `json:"break_even_utilisation"` // R/P
	Quantile         float64 `json:"quantile"`               // 1 - R/P
	DemandAtQuantile float64 `json:"demand_at_quantile"`
	Committed        int     `json:"recommended_committed_gpus"`
	CostUSD          float64 `json:"expected_cost_usd"`
	CommittedCostUSD float64 `json:"committed_cost_usd"` // CostUSD split by capacity type
	OnDemandCostUSD  float64 `json:"on_demand_cost_usd"`
	SpotCostUSD      float64 `json:"spot_cost_usd"`
	AllOnDemandUSD   float64 `json:"all_on_demand_cost_usd"` // every GPU-hour on demand, no spot
	NoCommitmentUSD  float64 `json:"no_commitment_cost_usd"` // nothing committed, the spot share kept
	SavingUSD        float64 `json:"saving_vs_all_on_demand_usd"`
	CommittedUsed    float64 `json:"committed_utilisation"` // busy share of committed GPU-hours
	// Kind is how the commitment is billed (the catalog's kind of the
	// term): a discount on the usage, or capacity nodes to fill.
	Kind commit.Kind `json:"kind"`
	// Billing is the recommended commitment billed hour by hour on the
	// demand (internal/cost/commit), the overflow at the overflow rate:
	// its coverage and utilisation as Cost Explorer reports them. For a
	// capacity commitment it assumes the scheduler fills the committed
	// nodes first.
	Billing     commit.Statement `json:"billing"`
	Curve       []Point          `json:"cost_by_committed_level"`
	Sensitivity []Sensitivity    `json:"sensitivity"`
	Buy         Purchase         `json:"buy"`
}

// Skipped is a model that could not be planned, and why.
type Skipped struct {
	Model  string `json:"gpu_model"`
	Reason string `json:"reason"`
}

// Plan is the commitment plan of every model of a demand.
type Plan struct {
	Term      price.Capacity `json:"term"`
	SpotShare float64        `json:"spot_share"`
	Hours     int            `json:"hours"`
	Models    []ModelPlan    `json:"models"`
	Skipped   []Skipped      `json:"skipped,omitempty"`
	// Warnings names every price the plan used that is stale or expired
	// on Options.Now, with its age and source.
	Warnings []price.Warning `json:"price_warnings"`
}

// Build plans every model of d against the catalog. A model whose prices
// the catalog does not know is skipped with the reason; an error is returned
// only for bad options or when no model could be planned.
func Build(d *Demand, cat *price.Catalog, o Options) (*Plan, error) {
	if o.Term != price.Reserved1y && o.Term != price.Reserved3y && o.Term != price.ReservedBlock {
		return nil, fmt.Errorf("term %q: want %s, %s or %s", o.Term, price.Reserved1y, price.Reserved3y, price.ReservedBlock)
	}
	if o.SpotShare < 0 || o.SpotShare > 1 {
		return nil, fmt.Errorf("spot share %g: want 0..1", o.SpotShare)
	}
	if err := d.check(); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if _, ok := o.Held[""]; ok && len(d.Series) > 1 {
		return nil, fmt.Errorf("held GPUs given without a model, for a demand of %d models: name the model of each (MODEL=GPUS)", len(d.Series))
	}
	growth := o.Growth
	if growth == nil {
		growth = []float64{0.1, -0.1}
	}
	p := &Plan{Term: o.Term, SpotShare: o.SpotShare, Hours: d.Hours}
	for _, s := range d.Series {
		prices, rates, err := resolve(cat, s.Model, o)
		if err != nil {
			if errors.Is(err, price.ErrUnknown) || errors.Is(err, price.ErrExpired) {
				p.Skipped = append(p.Skipped, Skipped{Model: s.Model, Reason: err.Error()})
				continue
			}
			return nil, err
		}
		p.Models = append(p.Models, planModel(s, prices, rates, growth, o))
		p.Warnings = appendWarnings(p.Warnings, price.Warnings(prices.all(), o.Now))
	}
	if len(p.Models) == 0 {
		var reasons []string
		for _, s := range p.Skipped {
			reasons = append(reasons, "skipped "+s.Model+": "+s.Reason)
		}
		return p, fmt.Errorf("no model could be planned:\n  %s", strings.Join(reasons, "\n  "))
	}
	return p, nil
}

// planModel plans one series.
func planModel(s Series, ps Prices, r Rates, growth []float64, o Options) ModelPlan {
	opt := Optimise(s.GPUs, r)
	q := max(0, 1-r.BreakEven())
	mp := ModelPlan{
		Model: s.Model, Hours: len(s.GPUs), Prices: ps,
		OverflowUSD: r.Overflow(), BreakEven: r.BreakEven(), Quantile: q,
		Committed: opt.Level, CostUSD: opt.Cost, Curve: thinCurve(opt.Curve, opt.Level),
	}
	for _, g := range s.GPUs {
		mp.GPUHours += g
		mp.PeakGPUs = max(mp.PeakGPUs, g)
		mp.CommittedUsed += min(g, float64(opt.Level))
	}
	if q > 0 {
		mp.DemandAtQuantile = Quantile(s.GPUs, q)
	}
	if opt.Level > 0 {
		mp.CommittedUsed /= float64(opt.Level * len(s.GPUs))
	}
	mp.CommittedCostUSD = float64(opt.Level) * r.Committed * float64(len(s.GPUs))
	if overflow := opt.Cost - mp.CommittedCostUSD; overflow > 0 {
		mp.SpotCostUSD = overflow * r.SpotShare * r.Spot / r.Overflow()
		mp.OnDemandCostUSD = overflow - mp.SpotCostUSD
	}
	mp.AllOnDemandUSD = mp.GPUHours * r.OnDemand
	mp.NoCommitmentUSD = Cost(s.GPUs, 0, r)
	mp.SavingUSD = mp.AllOnDemandUSD - mp.CostUSD
	for _, g := range growth {
		mp.Sensitivity = append(mp.Sensitivity, sensitivity(s.GPUs, r, opt.Level, g))
	}
	held, ok := o.Held[s.Model]
	if !ok {
		held = o.Held[""]
	}
	mp.Buy = purchase(opt.Curve, r, len(s.GPUs), ps, held, o.Term)
	mp.Kind = ps.Committed.Kind
	mp.Billing = billing(s, opt.Level, r, mp.Kind)
	return mp
}

// billing is level GPUs of a commitment of kind k billed on the series,
// the overflow at the overflow rate.
func billing(s Series, level int, r Rates, k commit.Kind) commit.Statement {
	c := commit.Commitment{Kind: k, Models: []string{s.Model}, GPUs: float64(level), USDPerGPUHour: r.Committed}
	st, err := commit.Bill(c, []commit.Usage{{Model: s.Model, GPUs: s.GPUs}}, map[string]commit.Rate{s.Model: {OnDemand: r.Overflow()}})
	if err != nil { // only for a kind the catalog refuses, or an overflow rate of 0
		return commit.Statement{Kind: k}
	}
	return st
}

func sensitivity(demand []float64, r Rates, level int, growth float64) Sensitivity {
	scaled := make([]float64, len(demand))
	for i, d := range demand {
		scaled[i] = d * (1 + growth)
	}
	best := Optimise(scaled, r)
	kept := Cost(scaled, float64(level), r)
	return Sensitivity{Growth: growth, BestLevel: best.Level, BestCostUSD: best.Cost,
		KeptCostUSD: kept, RegretUSD: kept - best.Cost, KeptLevelUsed: level}
}

package moves

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/cost"
	"github.com/corral-sched/corral/internal/cost/commit"
	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/sim"
)

// Move is one replay priced: what it cost, what it saved against the
// baseline, and what it cost in waits and lost work.
type Move struct {
	Name    string  `json:"move"`
	What    string  `json:"what"`
	CostUSD float64 `json:"cost_usd"`
	// SavingUSD is the saving at equal work: the baseline's cost less its
	// work at this move's price of a GPU-hour of work. Replays finish
	// different work in the window (see BacklogGPUH), so costs alone do
	// not compare.
	SavingUSD  float64 `json:"saving_usd"`
	SavingPct  float64 `json:"saving_pct"`
	BoughtGPUH float64 `json:"bought_gpu_hours"`
	UsedGPUH   float64 `json:"used_gpu_hours"`
	// WorkGPUH is the workload's work done in the window, each job at what
	// it needs as given (not what the move gave it); USDPerWorkGPUH the
	// cost of one such GPU-hour.
	WorkGPUH         float64       `json:"work_done_gpu_hours"`
	USDPerWorkGPUH   float64       `json:"usd_per_work_gpu_hour"`
	USDPerUsefulGPUH float64       `json:"usd_per_useful_gpu_hour"`
	MeanWaitH        float64       `json:"mean_wait_h"`
	P99WaitH         float64       `json:"p99_wait_h"`
	WaitDeltaH       float64       `json:"mean_wait_change_h"` // against the baseline
	Interruptions    int           `json:"interruptions"`
	LostGPUH         float64       `json:"lost_gpu_hours"` // work lost to interruptions and preemptions
	LostUSD          float64       `json:"lost_usd"`       // what those GPU-hours cost
	UndoneGPUH       float64       `json:"work_undone_gpu_hours"`
	BacklogGPUH      float64       `json:"backlog_gpu_hours"` // accepted, not done when the arrival window closes
	Refused          int           `json:"refused"`
	CommittedGPUs    int           `json:"committed_gpus,omitempty"`
	ByCapacity       []cost.Line   `json:"by_capacity_type"`
	Prices           []price.Price `json:"catalog_lines"`

	demand *sim.Result
}

func newMove(name, what string, res *sim.Result, bill *cost.Bill) Move {
	s, t := res.Summary, bill.Total
	m := Move{Name: name, What: what, CostUSD: t.CostUSD, BoughtGPUH: t.BoughtGPUH, UsedGPUH: t.UsedGPUH,
		MeanWaitH: s.MeanWaitH, P99WaitH: s.P99WaitH, Interruptions: s.Interruptions, UndoneGPUH: s.UndoneGPUH,
		Refused: s.Refused, ByCapacity: bill.ByCapacity, Prices: bill.Prices}
	if t.USDPerUsefulGPUH != nil {
		m.USDPerUsefulGPUH = *t.USDPerUsefulGPUH
	}
	for _, l := range bill.ByCapacity {
		lost := l.PreemptedLostGPUH + l.InterruptedLostGPUH
		m.LostGPUH += lost
		if l.BoughtGPUH > 0 {
			m.LostUSD += lost * l.CostUSD / l.BoughtGPUH
		}
	}
	return m
}

// Report is every replay of a Run.
type Report struct {
	Input    string `json:"input"`
	Policy   string `json:"policy"`
	Nodes    int    `json:"nodes_per_pool"`
	GPUModel string `json:"gpu_model"`
	Offer    string `json:"offer"`
	Provider string `json:"provider"`
	// Skipped are the moves that do not apply to the GPU model, and why
	// (mig on a model without MIG): not replayed, not priced.
	Skipped     []Skipped        `json:"skipped_moves,omitempty"`
	Terms       []price.Capacity `json:"floor_terms"`
	SpotBand    string           `json:"spot_interruption_band"`
	SpotMonthly float64          `json:"spot_interrupted_per_month"` // the band's high end
	// SpotRatePerNodeHour is the interruption rate simulated.
	SpotRatePerNodeHour float64     `json:"spot_interruptions_per_node_hour"`
	SpotOutageH         float64     `json:"spot_outage_mean_h"`
	Baseline            Move        `json:"baseline"`
	Moves               []Move      `json:"moves"`
	AllButFloor         Move        `json:"all_but_floor"`
	All                 Move        `json:"all"`
	Best                string      `json:"best_move"` // the move alone that saves most
	Floors              []FloorPlan `json:"floors"`
	Warnings            []string    `json:"warnings,omitempty"`
}

// Skipped is a move left out, and why.
type Skipped struct {
	Move string `json:"move"`
	Why  string `json:"why"`
}

// spotRate takes the interruption rate from the offer's published band.
func (rep *Report) spotRate(o *price.Offer) {
	in := o.Interruption
	if in == nil || len(in.PerMonth) != 2 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s has no published interruption band in the catalog: spot is simulated without interruptions", o.Name()))
		return
	}
	rep.SpotBand, rep.SpotMonthly = in.Band, in.PerMonth[1]
	rep.SpotRatePerNodeHour = RatePerNodeHour(rep.SpotMonthly)
	if in.Band == ">20%" {
		rep.Warnings = append(rep.Warnings, "the band >20% has no upper bound; 20% a month is simulated, a lower bound")
	}
}

// finish computes savings against the baseline, the best move and the
// warnings about old prices.
func (rep *Report) finish(now time.Time) {
	set := func(m *Move) {
		m.SavingUSD = rep.Baseline.CostUSD - m.USDPerWorkGPUH*rep.Baseline.WorkGPUH
		if rep.Baseline.CostUSD > 0 {
			m.SavingPct = 100 * m.SavingUSD / rep.Baseline.CostUSD
		}
		m.WaitDeltaH = m.MeanWaitH - rep.Baseline.MeanWaitH
	}
	for i := range rep.Moves {
		set(&rep.Moves[i])
		if rep.Best == "" || rep.Moves[i].SavingUSD > rep.move(rep.Best).SavingUSD {
			rep.Best = rep.Moves[i].Name
		}
	}
	set(&rep.AllButFloor)
	set(&rep.All)
	var used []price.Price
	for _, m := range append([]Move{rep.Baseline, rep.All}, rep.Moves...) {
		used = append(used, m.Prices...)
	}
	rep.Warnings = append(rep.Warnings, price.StaleWarnings(used, now)...)
	for _, f := range rep.Floors {
		if f.Skipped != "" {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("no floor for pool %s after %s: %s", f.Pool, f.After, f.Skipped))
		}
	}
}

func (rep *Report) move(name string) Move {
	i := slices.IndexFunc(rep.Moves, func(m Move) bool { return m.Name == name })
	return rep.Moves[i]
}

// Write prints the report as a table with the catalog lines each replay
// used and the warnings.
func (rep *Report) Write(w io.Writer) {
	fmt.Fprintf(w, "%s; policy %s; pools of up to %d nodes of 8 %s, scaled from zero; priced as %s\n\n",
		rep.Input, rep.Policy, rep.Nodes, rep.GPUModel, rep.Offer)
	fmt.Fprintf(w, "%-14s %10s %10s %10s %10s %12s %7s %9s %9s %6s %10s %9s %9s\n", "move", "cost USD", "bought", "work", "USD/work",
		"saving USD", "saving", "wait mean", "wait p99", "stops", "lost GPU-h", "lost USD", "backlog")
	rows := append(append([]Move{rep.Baseline}, rep.Moves...), rep.AllButFloor, rep.All)
	for _, m := range rows {
		fmt.Fprintf(w, "%-14s %10.0f %10.0f %10.0f %10.2f %12.0f %6.1f%% %8.2fh %8.2fh %6d %10.1f %9.0f %9.0f\n", m.Name, m.CostUSD,
			m.BoughtGPUH, m.WorkGPUH, m.USDPerWorkGPUH, m.SavingUSD+0, m.SavingPct+0, m.MeanWaitH, m.P99WaitH, m.Interruptions, m.LostGPUH,
			m.LostUSD, m.BacklogGPUH)
	}
	fmt.Fprintf(w, "\nalone, %s saves most on this workload: $%.0f (%.1f%%) against the baseline.\n", rep.Best,
		rep.move(rep.Best).SavingUSD, rep.move(rep.Best).SavingPct)
	fmt.Fprintf(w, "all together: $%.0f (%.1f%%), mean wait %+.2fh against the baseline.\n", rep.All.SavingUSD, rep.All.SavingPct, rep.All.WaitDeltaH)
	fmt.Fprintln(w, "\nwhat each move is:")
	for _, m := range rows {
		fmt.Fprintf(w, "  %-14s %s\n", m.Name, m.What)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "  %-14s skipped: %s\n", s.Move, s.Why)
	}
	rep.writeSpotAndFloor(w)
	rep.writeLines(w, rows)
	if len(rep.Warnings) > 0 {
		fmt.Fprintln(w, "\nwarnings:")
		for _, s := range rep.Warnings {
			fmt.Fprintln(w, "  "+s)
		}
	}
	fmt.Fprintln(w, "\ncost, bought and work are over the arrival window (the steady state; the drain after the last arrival")
	fmt.Fprintln(w, "is left out). bought: GPU-hours of nodes there or joining. work: GPU-hours of the workload's work done,")
	fmt.Fprintln(w, "each job at what it needs as generated (a 250-milli notebook at 0.25 GPU), whatever the move gave it.")
	fmt.Fprintln(w, "saving: at equal work, the baseline's cost less its work at the move's USD/work (the replays finish")
	fmt.Fprintln(w, "different work in the window). waits: every job, arrival to start. stops: jobs stopped by")
	fmt.Fprintln(w, "interruptions or preemptions; lost: their work since the last checkpoint, and what it cost. backlog:")
	fmt.Fprintln(w, "work arrived and not done when the window closes, measured as work is.")
}

func (rep *Report) writeSpotAndFloor(w io.Writer) {
	if rep.SpotBand != "" {
		fmt.Fprintf(w, "\nspot: interruption band %s a month (catalog), %.0f%% simulated: %.6f interruptions per node-hour;\n",
			rep.SpotBand, 100*rep.SpotMonthly, rep.SpotRatePerNodeHour)
		fmt.Fprintf(w, "  an interrupted node's jobs keep their last checkpoint, and its capacity is missing for an\n")
		fmt.Fprintf(w, "  exponential time of mean %.1fh (an assumption: no provider publishes it).\n", rep.SpotOutageH)
	}
	rep.writeFloors(w)
}

// writeFloors sets the floor of each kind side by side: what it saved,
// the planner's level against the brute-force search on the same series,
// and the commitment's coverage and utilisation in the replay.
func (rep *Report) writeFloors(w io.Writer) {
	fmt.Fprintln(w, "\nthe floor, by kind of commitment:")
	for _, m := range rep.Moves {
		if f := rep.floorOf(m.Name); f != nil && f.Skipped != "" {
			fmt.Fprintf(w, "  %-12s %-9s not planned: no %s price known for the offer; give one with --prices\n", m.Name, f.Kind, f.Term)
		} else if f != nil {
			verb := "saves"
			if m.SavingUSD < 0 {
				verb = "loses"
			}
			fmt.Fprintf(w, "  %-12s %-9s %s $%.0f (%.1f%%) against the baseline\n", m.Name, f.Kind, verb, math.Abs(m.SavingUSD), m.SavingPct)
		}
	}
	fmt.Fprintf(w, "  %-14s %-15s %-9s %-14s %-9s %8s %12s %10s %9s %12s %11s\n", "planned on", "term", "kind", "pool", "series", "planner",
		"brute force", "committed", "coverage", "utilisation", "unused USD")
	for _, f := range rep.Floors {
		if f.Skipped != "" {
			continue
		}
		series := "billed"
		if f.Kind == commit.Capacity {
			series = "occupied"
		}
		check := "planner = brute force"
		if float64(f.PlannerGPUs) != f.BruteForceGPUs {
			check = "PLANNER DIFFERS FROM BRUTE FORCE"
		}
		fmt.Fprintf(w, "  %-14s %-15s %-9s %-14s %-9s %8d %12.0f %10d %8.1f%% %11.1f%% %11.0f  %s\n", f.After, f.Term, f.Kind, trim(f.Pool, 14), series,
			f.PlannerGPUs, f.BruteForceGPUs, f.committed(), 100*f.Billing.Coverage, 100*f.Billing.Utilisation, f.Billing.UnusedUSD, check)
	}
	fmt.Fprintln(w, "  series: billed, the on-demand GPUs there each hour in every pool (a discount applies to them after the")
	fmt.Fprintln(w, "  fact, wherever they run); occupied, the pool's cards with work on them (capacity must be filled, in whole")
	fmt.Fprintln(w, "  8-GPU nodes). brute force: every level from 0 to the peak billed hour by hour on the same series.")
	fmt.Fprintln(w, "  coverage: share of the usage the commitment covered; utilisation: share of the commitment used, in the replay.")
}

// committed is the GPUs committed: whole nodes of a capacity floor, the
// planner's level of a discount.
func (f FloorPlan) committed() int {
	if f.Kind == commit.Capacity {
		return f.CommittedGPUs
	}
	return f.PlannerGPUs
}

// floorOf is the first floor planned for a move's term, when the move is
// a floor move.
func (rep *Report) floorOf(move string) *FloorPlan {
	for i, f := range rep.Floors {
		if floorName(f.Term) == move && f.After == "baseline" {
			return &rep.Floors[i]
		}
	}
	return nil
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// writeLines lists the catalog lines every replay used, once each, and
// which replays used them.
func (rep *Report) writeLines(w io.Writer, rows []Move) {
	fmt.Fprintln(w, "\ncatalog lines used:")
	type line struct {
		p     price.Price
		moves []string
	}
	var lines []*line
	for _, m := range rows {
		for _, p := range m.Prices {
			i := slices.IndexFunc(lines, func(l *line) bool { return l.p.Instance == p.Instance && l.p.Capacity == p.Capacity })
			if i < 0 {
				lines = append(lines, &line{p: p})
				i = len(lines) - 1
			}
			lines[i].moves = append(lines[i].moves, m.Name)
		}
	}
	for _, l := range lines {
		how := ""
		if l.p.How != "" {
			how = ", " + l.p.How
		}
		fmt.Fprintf(w, "  %s %s %s %s: $%.3f per GPU-hour (data of %s%s; %s), used by %v\n", l.p.Provider, l.p.Instance, l.p.Region,
			l.p.Capacity, l.p.USDPerGPUHour, l.p.Seen, how, l.p.Source, l.moves)
	}
}

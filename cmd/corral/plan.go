package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/cost/commit"
	"github.com/corral-sched/corral/internal/cost/plan"
	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/report/html"
)

const planUsage = `Usage: corral plan --demand DEMAND.csv [flags]

Sizes GPU commitments. For each GPU model in DEMAND.csv (rows
hour,gpu_model,gpus, or the columns a header line names in any order; hours
from 0, missing hours are zero demand; at most 1,000,000 GPUs of a model in
an hour; corral sim --demand-dir writes such files) it finds the number of GPUs to commit for the
term that makes the demand cheapest: committed GPUs cost the committed rate
every hour, demand above them runs on demand (or, with --spot-share, partly
on spot). A committed GPU pays for itself when it is busy in more than
committed/on-demand of the hours, so the best level is that quantile of the
demand; the plan shows it, the cost of every other level, and what 10% more
or less demand does.

Prices come from corral's catalog (each with its source and date; see
internal/cost/price/catalog.yaml). A price older than 90 days is said STALE
and one past the last day its source said it holds EXPIRED, in the text,
the JSON (plan.price_warnings[]) and the HTML; no plan buys on an expired
price unless given --allow-expired: the first offer with current prices is
taken, or the model is not planned and the reason says so. The catalog leaves out what is not known,
such as every 1- and 3-year price (no provider page with them was found):
give them, and private discounts, in a prices file of the same format with
--prices. 'corral prices' lists the catalog with sources and ages.

With --unpacked, the same work before packing is planned too, and the two
plans are compared: committing at the unpacked run rate locks in waste.

OUT.json (--json) is for other tools: version; plan.models[] with gpu_model,
recommended_committed_gpus, prices.{committed,on_demand,spot} (usd_per_gpu_hour,
source, seen, how), break_even_utilisation, quantile, expected_cost_usd,
all_on_demand_cost_usd (no spot), no_commitment_cost_usd (the spot share kept),
cost_by_committed_level[] (committed_gpus, cost_usd) and sensitivity[]
(growth, best_level, kept_cost_usd, regret_usd); plan.skipped[] (gpu_model,
reason); with --unpacked also unpacked and differences[].

Examples:
  corral plan --demand packed.csv --prices my-prices.yaml --json plan.json
  corral plan --demand packed.csv --unpacked unpacked.csv --term 3y --html plan.html

Flags:
`

type planOptions struct {
	demand, unpacked, jsonPath, htmlPath, term, prices, families, now, held string
	spotShare                                                               float64
	quiet, allowExpired                                                     bool
}

func parsePlanFlags(args []string, stderr io.Writer) (planOptions, error) {
	var o planOptions
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, planUsage); fs.PrintDefaults() }
	fs.StringVar(&o.demand, "demand", "", "hourly demand CSV (hour,gpu_model,gpus) to plan for; required")
	fs.StringVar(&o.unpacked, "unpacked", "", "the same work unpacked (same format): plan it too and compare")
	fs.StringVar(&o.jsonPath, "json", "", "write the plan as JSON to this file")
	fs.StringVar(&o.htmlPath, "html", "", "write a self-contained HTML report to this file")
	fs.StringVar(&o.term, "term", "block", "commitment: block (a reservation of days to weeks paid up front, such as EC2 Capacity Blocks; the only commitment the built-in catalog has a provider's price for), 1y or 3y")
	fs.StringVar(&o.prices, "prices", "", "YAML prices file that adds offers or overrides the catalog's figures")
	fs.StringVar(&o.families, "family", "", "offer per model, e.g. H100-80GB=a3-highgpu,A10G=g5 (default: the catalog's first)")
	fs.Float64Var(&o.spotShare, "spot-share", 0, "share of demand above the committed level run on spot (0..1)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress bar")
	fs.StringVar(&o.held, "held", "", "GPUs already committed under the term, MODEL=N[,MODEL=N] (or N for a one-model demand): the plan buys the difference")
	fs.StringVar(&o.now, "now", "", "the day prices are aged on, YYYY-MM-DD (default: today)")
	fs.BoolVar(&o.allowExpired, "allow-expired", false, "buy on a price past the last day its source said it holds (said as EXPIRED in every output)")
	if err := parseFlags(fs, "", args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, unexpected(fs)
	}
	if o.demand == "" {
		return o, usageErrorf("--demand is required (a CSV of hour,gpu_model,gpus)")
	}
	return o, nil
}

func runPlan(args []string, stdout, stderr io.Writer) error {
	o, err := parsePlanFlags(args, stderr)
	if err != nil {
		return err
	}
	opts, err := planOpts(o)
	if err != nil {
		return err
	}
	cat, err := planCatalogOn(o.prices, opts.Now)
	if err != nil {
		return err
	}
	prog := newProgress(stderr, o.quiet, "planning")
	out, err := buildPlans(o, cat, opts, prog)
	prog.finish()
	if err != nil {
		return err
	}
	for _, s := range out.Plan.Skipped {
		fmt.Fprintf(stderr, "corral plan: skipped %s: %s\n", s.Model, s.Reason)
	}
	printPlan(stdout, "plan for "+o.demand, out.Plan)
	if out.Unpacked != nil {
		printPlan(stdout, "plan for the unpacked work in "+o.unpacked, out.Unpacked)
		printDifferences(stdout, out.Differences)
	}
	if o.jsonPath != "" {
		if err := writePlanJSON(o.jsonPath, &out.Output); err != nil {
			return err
		}
	}
	if o.htmlPath != "" {
		if err := writePlanHTML(o, out); err != nil {
			return err
		}
	}
	return nil
}

// planRun is a plan's output and the demand it was made from.
type planRun struct {
	plan.Output
	demand, unpackedDemand *plan.Demand
}

func planOpts(o planOptions) (plan.Options, error) {
	opts := plan.Options{SpotShare: o.spotShare, Families: map[string]string{}, AllowExpired: o.allowExpired}
	now, err := dayFlag("--now", o.now)
	if err != nil {
		return opts, err
	}
	opts.Now = now
	switch o.term {
	case "1y":
		opts.Term = price.Reserved1y
	case "3y":
		opts.Term = price.Reserved3y
	case "block":
		opts.Term = price.ReservedBlock
	default:
		return opts, fmt.Errorf("--term %q: want block, 1y or 3y", o.term)
	}
	if opts.Held, err = parseHeld(o.held); err != nil {
		return opts, err
	}
	for _, kv := range strings.Split(o.families, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		model, fam, ok := strings.Cut(kv, "=")
		if !ok {
			return opts, fmt.Errorf("--family %q: want MODEL=FAMILY", kv)
		}
		m, err := gpu.Lookup(strings.TrimSpace(model))
		if err != nil {
			return opts, fmt.Errorf("--family %q: %w", kv, err)
		}
		opts.Families[m.Name] = strings.TrimSpace(fam)
	}
	return opts, nil
}

// parseHeld reads --held: MODEL=N pairs, or N alone for every model
// (the key "").
func parseHeld(v string) (map[string]int, error) {
	held := map[string]int{}
	for _, kv := range strings.Split(v, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		model, n, ok := strings.Cut(kv, "=")
		if !ok {
			model, n = "", kv
		}
		gpus, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || gpus < 0 || gpus > plan.MaxGPUs {
			return nil, fmt.Errorf("--held %q: want MODEL=GPUS or GPUS, a whole number from 0 to %d", kv, plan.MaxGPUs)
		}
		if model != "" {
			m, err := gpu.Lookup(strings.TrimSpace(model))
			if err != nil {
				return nil, fmt.Errorf("--held %q: %w", kv, err)
			}
			model = m.Name
		}
		held[model] = gpus
	}
	return held, nil
}

// planCatalog is the catalog with the prices file at path laid over it,
// its dates checked against today.
func planCatalog(path string) (*price.Catalog, error) {
	return planCatalogOn(path, time.Now().UTC())
}

// planCatalogOn is planCatalog with dates checked against now: a figure
// dated after now is refused.
func planCatalogOn(path string, now time.Time) (*price.Catalog, error) {
	cat, err := readCatalog(path)
	if err != nil {
		return nil, err
	}
	return cat, cat.CheckDates(now)
}

func readCatalog(path string) (*price.Catalog, error) {
	cat, err := price.Default()
	if err != nil {
		return nil, err
	}
	if path == "" {
		return cat, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read prices: %w", err)
	}
	over, err := price.Parse(data, path)
	if err != nil {
		return nil, err
	}
	cat = price.Merge(cat, over)
	return cat, cat.Check()
}

func buildPlans(o planOptions, cat *price.Catalog, opts plan.Options, prog *progress) (*planRun, error) {
	steps := 1
	if o.unpacked != "" {
		steps = 2
	}
	out := &planRun{Output: plan.Output{Version: 1, Demand: o.demand, Unknown: cat.Unknown}}
	var err error
	if out.demand, err = loadDemand(o.demand); err != nil {
		return nil, err
	}
	if out.Plan, err = plan.Build(out.demand, cat, opts); err != nil {
		return nil, err
	}
	prog.update(1, steps)
	if o.unpacked == "" {
		return out, nil
	}
	out.UnpackedDemand = o.unpacked
	if out.unpackedDemand, err = loadDemand(o.unpacked); err != nil {
		return nil, err
	}
	if out.Unpacked, err = plan.Build(out.unpackedDemand, cat, opts); err != nil {
		return nil, fmt.Errorf("unpacked: %w", err)
	}
	out.Differences = plan.Compare(out.Plan, out.Unpacked, out.demand, plan.RatesOf(out.Plan)).Differences
	prog.update(2, steps)
	return out, nil
}

func printPlan(w io.Writer, title string, p *plan.Plan) {
	fmt.Fprintf(w, "\n%s: %s commitment, %d hours", title, p.Term, p.Hours)
	if p.SpotShare > 0 {
		fmt.Fprintf(w, ", %.0f%% of overflow on spot", 100*p.SpotShare)
	}
	fmt.Fprintln(w)
	for _, pw := range p.Warnings {
		fmt.Fprintf(w, "  WARNING %s\n", pw.Message)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "gpu model\toffer\tcommitted $/GPU-h\ton-demand $/GPU-h\tbreak-even\tpeak\tcommit\tcost $\tall on-demand $\tno commitment $\tsaving\t+10%: best, regret $\t-10%: best, regret $\t")
	for _, m := range p.Models {
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%.4f\t%.0f%%\t%g\t%d\t%s\t%s\t%s\t%.1f%%\t%s\t%s\t\n",
			m.Model, m.Prices.OnDemand.Instance, m.Prices.Committed.USDPerGPUHour, m.Prices.OnDemand.USDPerGPUHour,
			100*m.BreakEven, m.PeakGPUs, m.Committed, planMoney(m.CostUSD), planMoney(m.AllOnDemandUSD), planMoney(m.NoCommitmentUSD),
			100*m.SavingUSD/max(m.AllOnDemandUSD, 1e-12), planSens(m, 0), planSens(m, 1))
	}
	tw.Flush()
	fmt.Fprintln(w, "  all on-demand: every GPU-hour at the on-demand price; no commitment: nothing committed, the spot share kept;")
	fmt.Fprintln(w, "  saving: of the plan against all on-demand.")
	printBilling(w, p)
	printPurchases(w, p)
	for _, m := range p.Models {
		fmt.Fprintf(w, "  %s: a committed GPU pays for itself when busy in more than %.1f%% of hours; %d GPUs are (the %.1f%% quantile of hourly demand is %g GPUs)\n",
			m.Model, 100*m.BreakEven, m.Committed, 100*m.Quantile, m.DemandAtQuantile)
		if m.Prices.Committed.How != "" {
			fmt.Fprintf(w, "  %s %s price: %s (%s)\n", m.Model, p.Term, m.Prices.Committed.How, m.Prices.Committed.Source)
		}
	}
}

// printBilling says how each model's commitment is billed, and its
// coverage and utilisation hour by hour on the demand.
func printBilling(w io.Writer, p *plan.Plan) {
	fmt.Fprintln(w, "  the commitment billed hour by hour on the demand, at the planner's level:")
	for _, m := range p.Models {
		b, how := m.Billing, "discount, applied to matching usage in any node of its scope"
		if m.Kind == commit.Capacity {
			how = "capacity, nodes to fill (this assumes the scheduler fills them first; corral sim --moves measures it)"
		}
		fmt.Fprintf(w, "    %s: %d GPUs, %s\n", m.Model, m.Committed, how)
		fmt.Fprintf(w, "      coverage %.1f%% (%s of %s GPU-hours of usage), utilisation %.1f%% (%s of %s committed GPU-hours used; $%s paid unused)\n",
			100*b.Coverage, planMoney(b.CoveredGPUH), planMoney(b.UsageGPUH), 100*b.Utilisation,
			planMoney(b.CommittedGPUH-b.UnusedGPUH), planMoney(b.CommittedGPUH), planMoney(b.UnusedUSD))
	}
}

// printPurchases says what to buy: whole instances beyond what is held,
// the hourly commitment, the term's obligation and the extrapolation.
func printPurchases(w io.Writer, p *plan.Plan) {
	fmt.Fprintln(w, "  to buy, in whole instances:")
	for _, m := range p.Models {
		b := m.Buy
		fmt.Fprintf(w, "    %s: %d x %s (%d GPUs, %d each) beyond %d held, %d committed in all: $%s an hour of commitment, $%s over the term (%s, %s hours)\n",
			m.Model, b.Instances, b.Instance, b.GPUs, b.GPUsPerInstance, b.HeldGPUs, b.CommittedGPUs, planCents(b.CommitUSDPerHour),
			planMoney(b.TermObligationUSD), p.Term, planMoney(b.TermHours))
		fmt.Fprintf(w, "      cost over the sample $%s (fractional plan of %d GPUs: $%s); over the term $%s: %s\n",
			planMoney(b.CostUSD), m.Committed, planMoney(m.CostUSD), planMoney(b.TermCostUSD), b.Extrapolation)
		if b.Note != "" {
			fmt.Fprintf(w, "      %s\n", b.Note)
		}
	}
}

// planCents formats dollars with cents.
func planCents(v float64) string {
	whole := math.Floor(v)
	return fmt.Sprintf("%s.%02.0f", planMoney(whole), math.Min(99, math.Round(100*(v-whole))))
}

func planSens(m plan.ModelPlan, i int) string {
	if i >= len(m.Sensitivity) {
		return "-"
	}
	s := m.Sensitivity[i]
	return fmt.Sprintf("%d, %s", s.BestLevel, planMoney(s.RegretUSD))
}

func printDifferences(w io.Writer, ds []plan.Difference) {
	fmt.Fprintln(w, "\npacked vs unpacked:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "gpu model\tcommit packed\tcommit unpacked\tcost packed $\tcost unpacked $\tsaving $\twaste locked in by the unpacked level $\t")
	for _, d := range ds {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t\n", d.Model, d.PackedLevel, d.UnpackedLevel,
			planMoney(d.PackedCostUSD), planMoney(d.UnpackedCostUSD), planMoney(d.SavingUSD), planMoney(d.LockedInWasteUSD))
	}
	tw.Flush()
}

// money formats dollars with thousands separators and no cents.
func planMoney(v float64) string {
	neg := v < 0
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg && s != "0" {
		return "-" + b.String()
	}
	return b.String()
}

func writePlanJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

func writePlanHTML(o planOptions, out *planRun) error {
	return writeHTMLFile(o.htmlPath, html.PlanReport(&out.Output, out.demand, out.unpackedDemand))
}

// writeHTMLFile writes a report to a file.
func writeHTMLFile(path string, r html.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	if err := html.Write(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func loadDemand(path string) (*plan.Demand, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read demand: %w", err)
	}
	defer f.Close()
	return plan.ReadDemand(f, path)
}

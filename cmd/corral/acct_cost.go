package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/cost/alloc"
	"github.com/corral-sched/corral/internal/cost/focus"
	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/slurmfmt"
)

// costFlags are corral acct's flags for a bill in dollars.
type costFlags struct {
	price, prices, rate, capacity, idle, shared, format, by, account, checkFocus string
	sharedUSD                                                                    float64
	asCSV, asJSON                                                                *bool
}

func addCostFlags(fs *flag.FlagSet, asCSV, asJSON *bool) *costFlags {
	o := &costFlags{asCSV: asCSV, asJSON: asJSON}
	fs.StringVar(&o.price, "price", "", "price the use: USD per GPU-hour per `model` (H100=3.93,A100=1.29), or 'catalog' for each model's on-demand price in the catalog (see corral prices)")
	fs.StringVar(&o.prices, "prices", "", "with --price catalog: a YAML prices file laid over the catalog (negotiated rates)")
	fs.StringVar(&o.rate, "rate", string(price.OnDemand), "with --price catalog: the capacity type whose price bills a GPU-hour ("+capacityNames()+")")
	fs.StringVar(&o.capacity, "capacity", "", "the fleet's GPUs per `model` over the period (H100=16,L4=4); default on a server: its GPUs; required with --kube-log")
	fs.StringVar(&o.idle, "idle", string(alloc.IdleSeparate), "idle cost (capacity paid for, not used): 'separate', its own __idle__ line, or 'share', shared by used cost per model")
	fs.Float64Var(&o.sharedUSD, "shared-cost", 0, "a shared cost for the period in USD (control plane, storage, support), split among the owners")
	fs.StringVar(&o.shared, "shared", string(alloc.SharedWeighted), "how --shared-cost is split: 'weighted' by allocated cost, or 'even'")
	fs.StringVar(&o.format, "format", "", "output: table, csv, json, or focus (a FOCUS 1.2 CSV; needs --price); --csv and --json are csv and json")
	fs.StringVar(&o.by, "by", "", "with --kube-log: bill per 'queue' (default), 'namespace' or 'tenant'")
	fs.StringVar(&o.account, "account", "corral", "the billing account named in a FOCUS export (BillingAccountId)")
	fs.StringVar(&o.checkFocus, "check-focus", "", "check a FOCUS `file` against the columns corral writes, print its rows and BilledCost, and exit")
	return o
}

// resolve checks the flags against each other and sets format from the
// aliases.
func (o *costFlags) resolve(kube bool) error {
	switch {
	case o.format == "" && *o.asCSV:
		o.format = "csv"
	case o.format == "" && *o.asJSON:
		o.format = "json"
	case o.format == "":
		o.format = "table"
	}
	if !slices.Contains([]string{"table", "csv", "json", "focus"}, o.format) {
		return usageErrorf("--format %q: want table, csv, json or focus", o.format)
	}
	if o.format == "focus" && o.price == "" {
		return usageErrorf("--format focus needs --price")
	}
	if o.price == "" && (o.capacity != "" || o.sharedUSD != 0) {
		return usageErrorf("--capacity and --shared-cost need --price")
	}
	if o.price != "catalog" && (o.prices != "" || o.rate != string(price.OnDemand)) {
		return usageErrorf("--prices and --rate choose catalog prices: they need --price catalog")
	}
	if !slices.Contains(price.Capacities, price.Capacity(o.rate)) {
		return usageErrorf("--rate %q: want one of %s", o.rate, capacityNames())
	}
	if o.by == "" {
		o.by = map[bool]string{true: "queue", false: "tenant"}[kube]
	}
	if !kube && o.by != "tenant" {
		return usageErrorf("--by %q: a server bills per tenant", o.by)
	}
	if !slices.Contains([]string{"queue", "namespace", "tenant"}, o.by) {
		return usageErrorf("--by %q: want queue, namespace or tenant", o.by)
	}
	return nil
}

func capacityNames() string {
	var names []string
	for _, c := range price.Capacities {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

// canonicalModel is a GPU model by its catalog name, so that H100,
// H100-80GB and NVIDIA-H100-80GB-HBM3 are one model; unknown names stay.
func canonicalModel(name string) string {
	if m, err := gpu.Lookup(name); err == nil {
		return m.Name
	}
	return name
}

// parseModelList reads MODEL=NUMBER,... (flag names it in errors).
func parseModelList(flagName, list string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, item := range strings.Split(list, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || strings.TrimSpace(k) == "" || err != nil || n <= 0 || n > 1e9 {
			return nil, usageErrorf("--%s %q: want MODEL=NUMBER with a number above 0, such as H100=8", flagName, item)
		}
		out[canonicalModel(strings.TrimSpace(k))] = n
	}
	if len(out) == 0 {
		return nil, usageErrorf("--%s %q: no MODEL=NUMBER in it", flagName, list)
	}
	return out, nil
}

// billPrice is a model's price and where it came from.
type billPrice struct {
	Model         string  `json:"gpu_model"`
	USDPerGPUHour float64 `json:"usd_per_gpu_hour"`
	Source        string  `json:"source"`
	Seen          string  `json:"seen,omitempty"`
}

// acctPrices prices every model in models: from --price's list, or from
// the catalog's on-demand offers, warning on stderr about stale ones. A
// model with no price is refused by name.
func acctPrices(o *costFlags, models []string, stderr io.Writer) ([]billPrice, error) {
	var out []billPrice
	if o.price != "catalog" {
		list, err := parseModelList("price", o.price)
		if err != nil {
			return nil, err
		}
		for _, m := range models {
			p, ok := list[m]
			if !ok {
				return nil, fmt.Errorf("no price for GPU model %s, which the bill needs (--price gives: %s); add %s=USD to --price", m, strings.Join(slices.Sorted(maps.Keys(list)), ", "), m)
			}
			out = append(out, billPrice{Model: m, USDPerGPUHour: p, Source: "--price"})
		}
		return out, nil
	}
	now := time.Now().UTC()
	cat, err := planCatalogOn(o.prices, now)
	if err != nil {
		return nil, err
	}
	var ps []price.Price
	for _, m := range models {
		offer, err := cat.Find(m, "")
		if err != nil {
			return nil, fmt.Errorf("no price for GPU model %s in the catalog: %w; give it with --price %s=USD", m, err, m)
		}
		p, err := offer.PerGPUHour(price.Capacity(o.rate))
		if err != nil {
			return nil, fmt.Errorf("no price for GPU model %s: %w", m, err)
		}
		ps = append(ps, p)
		out = append(out, billPrice{Model: m, USDPerGPUHour: p.USDPerGPUHour, Source: p.Source, Seen: p.Seen})
	}
	for _, w := range price.StaleWarnings(ps, now) {
		fmt.Fprintf(stderr, "corral acct: warning: %s\n", w)
	}
	return out, nil
}

// billModels lists the models of the records and the capacity, sorted.
func billModels(recs []alloc.Record, capacity map[string]float64) []string {
	set := map[string]bool{}
	for _, r := range recs {
		set[r.Model] = true
	}
	for m := range capacity {
		set[m] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// acctWindow is the period billed: from --since (or the first record's
// start) to --until (or now when --since is given, else the last
// record's end).
func acctWindow(recs []alloc.Record, since, until string, now time.Time) (time.Time, time.Time, error) {
	var start, end time.Time
	for _, r := range recs {
		if start.IsZero() || r.Start.Before(start) {
			start = r.Start
		}
		if r.End.After(end) {
			end = r.End
		}
	}
	if since != "" {
		t, err := windowTime(since, now)
		if err != nil {
			return start, end, usageErrorf("--since: %w", err)
		}
		start, end = t, now
	}
	if until != "" {
		t, err := windowTime(until, now)
		if err != nil {
			return start, end, usageErrorf("--until: %w", err)
		}
		end = t
	}
	if !end.After(start) {
		return start, end, fmt.Errorf("no period to bill: no records, and no --since")
	}
	return start, end, nil
}

// windowTime is a --since or --until: a duration back from now, or
// sacct's forms.
func windowTime(v string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil {
		return now.Add(-d), nil
	}
	return slurmfmt.ParseSince(v, now)
}

// billFace is what a bill says about where it comes from.
type billFace struct {
	service string // the FOCUS ServiceName
	since   string
	until   string
	running int       // runs not ended, counted to when they were last seen
	seen    time.Time // when those were last seen
}

// writeAcctBill prices recs over the period against capacity and writes
// the bill in o's format.
func writeAcctBill(stdout, stderr io.Writer, o *costFlags, face billFace, recs []alloc.Record, capacity map[string]float64) error {
	if o.capacity != "" {
		c, err := parseModelList("capacity", o.capacity)
		if err != nil {
			return err
		}
		capacity = c
	}
	if len(capacity) == 0 {
		return usageErrorf("--price needs the fleet's capacity: --capacity MODEL=GPUS,... (the GPUs paid for over the period)")
	}
	start, end, err := acctWindow(recs, face.since, face.until, time.Now().UTC())
	if err != nil {
		return err
	}
	prices, err := acctPrices(o, billModels(recs, capacity), stderr)
	if err != nil {
		return err
	}
	in := alloc.Input{Start: start, End: end, Records: recs, Capacity: capacity, Prices: map[string]float64{},
		Idle: alloc.IdleMode(o.idle), SharedUSD: o.sharedUSD, Shared: alloc.SharedMode(o.shared)}
	for _, p := range prices {
		in.Prices[p.Model] = p.USDPerGPUHour
	}
	b, err := alloc.Allocate(in)
	if err != nil {
		return err
	}
	return writeBill(stdout, o, face, b, prices)
}

// writeBill writes b in o's format.
func writeBill(stdout io.Writer, o *costFlags, face billFace, b *alloc.Bill, prices []billPrice) error {
	switch o.format {
	case "focus":
		return focus.Write(stdout, b, focus.Meta{Provider: "corral", AccountID: o.account, AccountName: o.account, Service: face.service, OwnerKind: o.by})
	case "json":
		return json.NewEncoder(stdout).Encode(struct {
			By     string      `json:"by"`
			Prices []billPrice `json:"prices"`
			*alloc.Bill
		}{o.by, prices, b})
	case "csv":
		return writeBillCSV(stdout, o.by, b)
	}
	if err := writeBillTable(stdout, o.by, b, prices); err != nil {
		return err
	}
	if face.running > 0 {
		upTo := face.seen
		if b.End.Before(upTo) {
			upTo = b.End
		}
		what := fmt.Sprintf("%d runs not ended yet are", face.running)
		if face.running == 1 {
			what = "1 run not ended yet is"
		}
		fmt.Fprintf(stdout, "%s counted up to %s\n", what, upTo.UTC().Format(time.RFC3339))
	}
	return nil
}

func writeBillCSV(w io.Writer, by string, b *alloc.Bill) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{by, "gpu_model", "gpu_hours", "used_usd", "idle_usd", "shared_usd", "total_usd"})
	for _, l := range b.Lines {
		cw.Write([]string{l.Owner, l.Model, strconv.FormatFloat(l.GPUHours, 'f', 4, 64), l.Used.String(), l.Idle.String(), l.Shared.String(), l.Total().String()})
	}
	cw.Flush()
	return cw.Error()
}

func writeBillTable(w io.Writer, by string, b *alloc.Bill, prices []billPrice) error {
	shared := ""
	if b.Total > 0 && slices.ContainsFunc(b.Lines, func(l alloc.Line) bool { return l.Shared > 0 }) {
		shared = fmt.Sprintf("; shared cost split %s", b.Shared)
	}
	fmt.Fprintf(w, "bill from %s to %s (%s); idle cost %s%s\n\n", b.Start.UTC().Format(time.RFC3339), b.End.UTC().Format(time.RFC3339),
		b.End.Sub(b.Start).Round(time.Second), b.Idle, shared)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tMODEL\tGPU-HOURS\tUSED USD\tIDLE USD\tSHARED USD\tTOTAL USD\n", strings.ToUpper(by))
	for _, l := range b.Lines {
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%s\t%s\t%s\t%s\n", l.Owner, cmpOr(l.Model, "(shared)"), l.GPUHours, l.Used, l.Idle, l.Shared, l.Total())
	}
	fmt.Fprintf(tw, "total\t\t\t\t\t\t%s\n", b.Total)
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "%s\tTOTAL USD\tSHARE\n", strings.ToUpper(by))
	for _, l := range b.Owners() {
		fmt.Fprintf(tw, "%s\t%s\t%.1f%%\n", l.Owner, l.Total(), 100*float64(l.Total())/float64(max(b.Total, 1)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	source := map[string]string{}
	for _, p := range prices {
		source[p.Model] = p.Source
	}
	for _, m := range b.Models {
		fmt.Fprintf(w, "capacity %s: %g GPUs x %.4fh = %.4f GPU-hours at $%g per GPU-hour (%s) = $%s; %.4f used (%.1f%%)\n", m.Model, m.GPUs,
			b.End.Sub(b.Start).Hours(), m.CapacityGPUH, m.USDPerGPUHour, source[m.Model], m.Cost, m.UsedGPUH, 100*m.UsedGPUH/m.CapacityGPUH)
	}
	return nil
}

// checkFocusFile checks a FOCUS file and prints what it holds.
func checkFocusFile(path string, stdout io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("check FOCUS file: %w", err)
	}
	defer f.Close()
	sum, err := focus.Validate(f, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: FOCUS %s, the %d columns corral claims: %d rows, BilledCost %s\n", path, focus.Version, len(focus.Columns), sum.Rows, sum.BilledUSD())
	return nil
}

// serverBillRecords are a server's accounting records as runs to bill.
func serverBillRecords(recs []api.Record) []alloc.Record {
	var out []alloc.Record
	for _, r := range recs {
		if r.GPUs > 0 {
			out = append(out, alloc.Record{ID: r.Job, Owner: r.Tenant, Model: canonicalModel(r.GPUModel), GPUs: r.GPUs, Start: r.Start, End: r.End})
		}
	}
	return out
}

// serverCapacity is the server's GPUs per model.
func serverCapacity(gpus []api.GPU) map[string]float64 {
	out := map[string]float64{}
	for _, g := range gpus {
		out[canonicalModel(g.Model)]++
	}
	return out
}

// kubeBill bills the runs of a kube-scheduler accounting log.
func kubeBill(path string, o *costFlags, face billFace, stdout, stderr io.Writer) error {
	recs, running, err := kubeBillRecords(path, o.by)
	if err != nil {
		return err
	}
	face.running = running
	for _, r := range recs {
		face.seen = later(face.seen, r.End)
	}
	return writeAcctBill(stdout, stderr, o, face, recs, nil)
}

// kubeBillRecords are the pods of a kube-scheduler accounting log as runs
// to bill, each owned by its queue, namespace or tenant: those that ended,
// and those with a start and no end yet, running until the log's last
// record. It returns how many were running. A pod that held GPUs of no
// known model is refused by name.
func kubeBillRecords(path, by string) ([]alloc.Record, int, error) {
	recs, err := kubeRecords(path)
	if err != nil {
		return nil, 0, err
	}
	var out []alloc.Record
	var last time.Time
	open := map[string]kube.Record{}
	var order []string
	for _, r := range recs {
		if r.Time.After(last) {
			last = r.Time
		}
		switch {
		case r.Event == "start" && r.GPUs > 0:
			if _, seen := open[r.Pod]; !seen {
				order = append(order, r.Pod)
			}
			open[r.Pod] = r
		case r.Event == "end" && r.GPUs > 0:
			delete(open, r.Pod)
			rec, err := kubeBillRecord(path, by, r, r.Time.Add(-time.Duration(r.RunSeconds*float64(time.Second))), r.Time)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, rec)
		}
	}
	running := 0
	for _, pod := range order {
		if r, ok := open[pod]; ok {
			rec, err := kubeBillRecord(path, by, r, r.Time, last)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, rec)
			running++
		}
	}
	return out, running, nil
}

// kubeBillRecord is one pod's run from start to end.
func kubeBillRecord(path, by string, r kube.Record, start, end time.Time) (alloc.Record, error) {
	if r.GPUModel == "" {
		return alloc.Record{}, fmt.Errorf("%s: pod %s held %g GPUs of no known model (its node had no GPU product label), so it cannot be priced", path, r.Pod, r.GPUs)
	}
	owner := r.Tenant
	switch by {
	case "queue":
		owner = cmpOr(r.Queue, "(no queue)")
	case "namespace":
		owner, _, _ = strings.Cut(r.Pod, "/")
	}
	return alloc.Record{ID: r.Pod, Owner: owner, Model: canonicalModel(r.GPUModel), GPUs: r.GPUs, Start: start, End: end}, nil
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// serverBill asks a server for its records, its GPUs and the jobs
// running now, and writes the bill. It needs an admin: a bill divides the
// whole server's capacity, and a tenant sees only its own use.
func serverBill(ctx context.Context, c *client.Client, q url.Values, o *costFlags, face billFace, stdout, stderr io.Writer) error {
	who, err := c.Whoami(ctx)
	if err != nil {
		return err
	}
	if !who.Admin {
		return fmt.Errorf("--price needs an admin's token: the bill divides the whole server's capacity among the tenants, and tenant %s sees only its own use", who.Tenant)
	}
	a, err := c.Acct(ctx, q)
	if err != nil {
		return err
	}
	list, err := c.GPUList(ctx)
	if err != nil {
		return fmt.Errorf("the server's GPUs: %w", err)
	}
	recs := serverBillRecords(a.Records)
	if face.until == "" {
		jobs, err := c.Jobs(ctx, url.Values{"state": {"running"}})
		if err != nil {
			return fmt.Errorf("the running jobs: %w", err)
		}
		face.seen = time.Now().UTC()
		running := serverRunning(jobs, list.GPUs, face.seen)
		face.running = len(running)
		recs = append(recs, running...)
	}
	var capacity map[string]float64
	if o.capacity == "" {
		capacity = serverCapacity(list.GPUs)
	}
	return writeAcctBill(stdout, stderr, o, face, recs, capacity)
}

// serverRunning are the jobs running now as runs from their start to now,
// holding what they hold of each GPU.
func serverRunning(jobs []api.Job, gpus []api.GPU, now time.Time) []alloc.Record {
	held := map[string]map[string]float64{} // job -> model -> GPUs
	for _, g := range gpus {
		for _, u := range g.Jobs {
			if held[u.Job] == nil {
				held[u.Job] = map[string]float64{}
			}
			held[u.Job][canonicalModel(g.Model)] += u.Share
		}
	}
	var out []alloc.Record
	for _, j := range jobs {
		if j.State != "running" || j.Started == nil {
			continue
		}
		for _, m := range slices.Sorted(maps.Keys(held[j.ID])) {
			out = append(out, alloc.Record{ID: j.ID, Owner: j.Tenant, Model: m, GPUs: held[j.ID][m], Start: *j.Started, End: now})
		}
	}
	return out
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

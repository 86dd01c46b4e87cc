package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/slurmfmt"
)

const acctUsage = `Usage: corral acct [flags]

Shows accounting, like sacct: every job run with its GPUs, GPU-seconds and
exit status, and GPU-seconds summed per tenant, GPU model and MIG profile
(per --period when given). --csv prints the records as CSV for a
spreadsheet; --jobs prints them as a jobs file, the recorded workload
corral sim --workload jobs replays under every policy. Tenants see their own use; admins everyone's, or --tenant's.

--price bills the period in dollars (docs/cost-allocation.md): each
tenant's GPUs held from start to end at the price of its GPU model
(--price H100=3.93,A100=1.29, or --price catalog for the catalog's
on-demand prices), against the fleet's capacity over the period (the
server's GPUs, or --capacity H100=16; with --kube-log, per queue,
namespace or tenant by --by). Capacity paid for and not used is idle
cost: its own __idle__ line (--idle separate, the default) or shared in
proportion to used cost (--idle share), as OpenCost does. --format focus
writes a FOCUS 1.2 CSV; --check-focus FILE checks one.
  corral acct --since 720h --price A100=1.29 --idle share --format csv
  corral acct --kube-log acct.jsonl --price catalog --capacity H100=64,L4=16 --format focus > focus.csv
` + clientHelp + `
Flags:
`

func runAcct(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("acct", stderr)
	csv := fs.Bool("csv", false, "print the records as CSV")
	asJSON := fs.Bool("json", false, "print JSON")
	tenant := fs.String("tenant", "", "only this tenant (admins)")
	since := fs.String("since", "", "records that ended since this time (RFC 3339, sacct's 2026-04-01T08:00, 08:00, now-2hours) or this long ago (24h)")
	alias(fs, "since", "S", "starttime")
	until := fs.String("until", "", "records that ended before this time or this long ago")
	alias(fs, "until", "E", "endtime")
	jobsFlag := fs.String("job", "", "only these `jobs` (comma-separated IDs; sacct's -j)")
	alias(fs, "job", "j")
	period := fs.String("period", "", "sum per period of this length, such as 24h")
	demand := fs.Bool("demand", false, "print the hourly GPU demand (hour,gpu_model,gpus: GPUs held on average in each hour) for corral plan --demand")
	kubeLog := fs.String("kube-log", "", "read the accounting log of corral kube-scheduler instead of asking a server: a file of JSON lines (--accounting), or configmaps:NAMESPACE/PREFIX (--accounting-configmaps, through $KUBECONFIG or in cluster)")
	jobs := fs.Bool("jobs", false, "print the jobs that ran as a jobs file (CSV: submission, run time, tenant, shape, priority, recorded start and end) for corral sim --workload jobs")
	cost := addCostFlags(fs, csv, asJSON)
	if err := parseFlags(fs, acctUsage, args); err != nil {
		return err
	}
	if cost.checkFocus != "" {
		return checkFocusFile(cost.checkFocus, stdout)
	}
	if err := cost.resolve(*kubeLog != ""); err != nil {
		return err
	}
	*csv, *asJSON = cost.format == "csv", cost.format == "json"
	if cost.price != "" {
		if *jobsFlag != "" || *demand || *jobs || *period != "" {
			return usageErrorf("--price bills the whole fleet over the period: it does not take --job, --demand, --jobs or --period")
		}
		return billAcct(cost, cf, *kubeLog, *tenant, *since, *until, stdout, stderr)
	}
	if *jobs && *kubeLog != "" {
		recs, err := kubeLogJobs(*kubeLog)
		if err != nil {
			return err
		}
		return writeJobsFile(stdout, recs, nil)
	}
	if *kubeLog != "" {
		return kubeAcct(*kubeLog, *csv, *asJSON, *demand, stdout)
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	q, err := acctQuery(*tenant, *since, *until, *period)
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(60 * time.Second)
	defer cancel()
	if *csv {
		return c.AcctCSV(ctx, q, stdout)
	}
	a, err := c.Acct(ctx, q)
	if err != nil {
		return err
	}
	if *jobsFlag != "" {
		keep := set(*jobsFlag)
		a.Records = slices.DeleteFunc(a.Records, func(r api.Record) bool {
			for id := range keep {
				if sameJob(id, r.Job) {
					return false
				}
			}
			return true
		})
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(a)
	}
	if *jobs {
		return writeJobsFile(stdout, serverJobs(a.Records), serverMachines(a.Machine))
	}
	if *demand {
		return writeHourlyDemand(stdout, a.Records)
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "JOBID\tTENANT\tNAME\tTRY\tGPUS\tMODEL\tSTART\tELAPSED\tGPU-HOURS\tMAXRSS\tTOTALCPU\tSTATE\tEXIT")
	for _, r := range a.Records {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%g\t%s\t%s\t%s\t%.4f\t%s\t%s\t%s\t%d\n", r.Job, r.Tenant, orDash(r.Name), r.Attempt, r.GPUs,
			modelName(r.GPUModel, r.MIGProfile), r.Start.Local().Format(time.DateTime), r.End.Sub(r.Start).Round(time.Second),
			r.GPUSeconds/3600, rssString(r.MaxRSSKiB), cpuString(r.CPUSeconds), slurmState(r.SlurmState, r.State), r.ExitCode)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "TENANT\tPERIOD\tMODEL\tJOBS\tGPU-HOURS")
	for _, s := range a.Sums {
		p := "all"
		if !s.Period.IsZero() {
			p = s.Period.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.4f\n", s.Tenant, p, modelName(s.GPUModel, s.MIGProfile), s.Jobs, s.GPUSeconds/3600)
	}
	return tw.Flush()
}

// acctTime is a --since or --until the server takes: a duration back
// from now as it is, else sacct's forms read by this machine's clock.
func acctTime(v string) (string, error) {
	if _, err := time.ParseDuration(v); err == nil {
		return v, nil
	}
	t, err := slurmfmt.ParseSince(v, time.Now())
	if err != nil {
		return "", err
	}
	return t.Format(time.RFC3339), nil
}

// rssString writes a peak memory as sacct's MaxRSS does (K, M, G).
func rssString(kib int64) string {
	switch {
	case kib == 0:
		return "-"
	case kib >= 10<<20:
		return fmt.Sprintf("%.1fG", float64(kib)/(1<<20))
	case kib >= 10<<10:
		return fmt.Sprintf("%dM", kib>>10)
	}
	return fmt.Sprintf("%dK", kib)
}

// cpuString writes CPU time as sacct's TotalCPU does: [D-][H:]MM:SS.
func cpuString(secs float64) string {
	if secs == 0 {
		return "-"
	}
	return clock(time.Duration(secs * float64(time.Second)))
}

func modelName(model, mig string) string {
	if mig != "" {
		return model + "/" + mig
	}
	return orDash(model)
}

// acctQuery is the server's accounting query for the flags given.
func acctQuery(tenant, since, until, period string) (url.Values, error) {
	q := url.Values{}
	for k, v := range map[string]string{"tenant": tenant, "since": since, "until": until, "period": period} {
		if v == "" {
			continue
		}
		if k == "since" || k == "until" {
			var err error
			if v, err = acctTime(v); err != nil {
				return nil, &usageError{cmd: "acct", err: fmt.Errorf("--%s: %w", k, err)}
			}
		}
		q.Set(k, v)
	}
	return q, nil
}

// billAcct is corral acct --price: the bill of the Kubernetes face's
// accounting log, or of the server's records.
func billAcct(cost *costFlags, cf *clientFlags, kubeLog, tenant, since, until string, stdout, stderr io.Writer) error {
	if kubeLog != "" {
		return kubeBill(kubeLog, cost, billFace{service: "corral kube-scheduler", since: since, until: until}, stdout, stderr)
	}
	if tenant != "" {
		return usageErrorf("--price bills every tenant against the whole server: it does not take --tenant (read the tenant's line)")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	q, err := acctQuery("", since, until, "")
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(60 * time.Second)
	defer cancel()
	return serverBill(ctx, c, q, cost, billFace{service: "corral server", since: since, until: until}, stdout, stderr)
}

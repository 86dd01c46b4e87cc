package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/cost/price"
)

const pricesUsage = `Usage: corral prices [flags]
       corral prices import --format aws|azure|gcp|negotiated FILE (see corral prices import -h)

Lists corral's price catalog (internal/cost/price/catalog.yaml, with
--prices FILE laid over it): every price and spot interruption band with the
document it came from, the date of its data and its age; lines older than
90 days are marked STALE, those past the last day their document said they
hold (valid_until) EXPIRED. Prices are per instance-hour and per GPU-hour, the
conservative end of any range. What was looked for and not found follows.

Flags:
`

type pricesOptions struct {
	prices, now string
	json        bool
}

func runPrices(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "import" {
		return runPricesImport(args[1:], stdout, stderr)
	}
	var o pricesOptions
	fs := flag.NewFlagSet("prices", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, pricesUsage); fs.PrintDefaults() }
	fs.StringVar(&o.prices, "prices", "", "YAML prices file laid over the catalog")
	fs.StringVar(&o.now, "now", "", "the day ages are counted to, YYYY-MM-DD (default: today)")
	fs.BoolVar(&o.json, "json", false, "print JSON: as_of, lines[] and unknown[]")
	if err := parseFlags(fs, "", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return unexpected(fs)
	}
	now, err := dayFlag("--now", o.now)
	if err != nil {
		return err
	}
	cat, err := planCatalogOn(o.prices, now)
	if err != nil {
		return err
	}
	lines, err := cat.Lines(now)
	if err != nil {
		return err
	}
	if o.json {
		return writePricesJSON(stdout, cat, lines, now)
	}
	writePricesTable(stdout, cat, lines, now)
	return nil
}

// dayFlag parses a YYYY-MM-DD flag; empty is today (UTC).
func dayFlag(name, v string) (time.Time, error) {
	if v == "" {
		return time.Now().UTC().Truncate(24 * time.Hour), nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return t, fmt.Errorf("%s %q: want YYYY-MM-DD", name, v)
	}
	return t, nil
}

func writePricesJSON(w io.Writer, cat *price.Catalog, lines []price.Line, now time.Time) error {
	doc := struct {
		AsOf    string          `json:"as_of"`
		Now     string          `json:"now"`
		MaxAge  int             `json:"max_age_days"`
		Lines   []price.Line    `json:"lines"`
		Unknown []price.Unknown `json:"unknown"`
	}{cat.AsOf, now.Format(time.DateOnly), int(price.MaxAge.Hours() / 24), lines, cat.Unknown}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(doc)
}

func writePricesTable(w io.Writer, cat *price.Catalog, lines []price.Line, now time.Time) {
	stale := 0
	for _, l := range lines {
		if l.Stale {
			stale++
		}
	}
	fmt.Fprintf(w, "price catalog as of %s; ages on %s; %d of %d lines older than %d days\n\n", cat.AsOf, now.Format(time.DateOnly),
		stale, len(lines), int(price.MaxAge.Hours()/24))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tINSTANCE\tREGION\tGPU\tCAPACITY\tUSD/H\tUSD/GPU-H\tSEEN\tAGE\t\tSOURCE")
	for _, l := range lines {
		capacity, perH, perGPU := string(l.Capacity), fmt.Sprintf("%.4g", l.USDPerHour), fmt.Sprintf("%.3f", l.USDPerGPUHour)
		if l.Capacity == "" {
			capacity, perH, perGPU = "interruption", l.Band+"/month", ""
		}
		mark := ""
		if l.Stale {
			mark = "STALE"
		}
		if l.Expired {
			mark = "EXPIRED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%dd\t%s\t%s\n", l.Provider, l.Instance, l.Region, l.GPUKey, capacity,
			perH, perGPU, l.Seen, l.AgeDays, mark, l.Source)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nnot known (supply with --prices):")
	for _, u := range cat.Unknown {
		fmt.Fprintf(w, "  - %s (looked for by %s)\n", u.What, u.Seen)
	}
}

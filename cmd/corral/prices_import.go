package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/cost/priceimport"
)

const pricesImportUsage = `Usage: corral prices import --format aws|azure|gcp|negotiated [flags] FILE

Turns a provider's own machine-readable price file into a prices document
that corral plan, corral prices and corral sim take with --prices:

  aws         an AWS Price List service price list file (bulk offer file) of
              AmazonEC2 (terms OnDemand and Reserved), or a Savings Plans
              price list file (terms savingsPlan)
  azure       an Azure Retail Prices API response (Items of type
              Consumption and Reservation, with savingsPlan rates)
  gcp         a Cloud Billing Catalog API services.skus.list response of
              Compute Engine (GPU SKUs: OnDemand, Preemptible, Commit1Yr,
              Commit3Yr)
  negotiated  a CSV of your own rates with the header
              provider,instance,region,capacity,usd_per_hour,source,seen
              and optionally valid_until, gpu, gpus, note

Every price carries the file it came from and the date of its data: the
file's publication date for AWS, --seen (the day the response was
fetched) for Azure and GCP, the seen column for negotiated rates. Where a
file gives several options for one commitment (purchase and payment
options), the highest hourly price is kept and the others named in its
note. What was left out is said on stderr.

Example:
  corral prices import --format aws --out aws.yaml index.json
  corral plan --demand daily.csv --term 1y --prices aws.yaml

Flags:
`

// runPricesImport is corral prices import.
func runPricesImport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("prices import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, pricesImportUsage); fs.PrintDefaults() }
	format := fs.String("format", "", "the file's format: "+strings.Join(priceimport.Formats, ", ")+"; required")
	out := fs.String("out", "", "write the prices document to this file (default: stdout)")
	seen := fs.String("seen", "", "the date of the data, YYYY-MM-DD, for files that carry none (azure, gcp; default: today)")
	source := fs.String("source", "", "name the file's origin (a URL) in every price instead of the file name")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("prices import: want one FILE, got %d arguments", fs.NArg())
	}
	if *format == "" {
		return fmt.Errorf("prices import: --format is required (%s)", strings.Join(priceimport.Formats, ", "))
	}
	day, err := dayFlag("--seen", *seen)
	if err != nil {
		return err
	}
	path := fs.Arg(0)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read price file: %w", err)
	}
	base, err := price.Default()
	if err != nil {
		return err
	}
	r, err := priceimport.Import(*format, data, priceimport.Options{Name: path, Source: *source, Seen: day.Format(time.DateOnly), Base: base})
	if err != nil {
		return err
	}
	doc, err := priceimport.Encode(r.Catalog)
	if err != nil {
		return err
	}
	if err := writeImported(*out, doc, stdout); err != nil {
		return err
	}
	reportImport(stderr, path, r)
	return nil
}

func writeImported(path string, doc []byte, stdout io.Writer) error {
	if path == "" {
		_, err := stdout.Write(doc)
		return err
	}
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		return fmt.Errorf("write prices: %w", err)
	}
	return nil
}

// reportImport says on stderr what was imported and what was left out.
func reportImport(w io.Writer, path string, r *priceimport.Result) {
	n := 0
	for _, o := range r.Catalog.Offers {
		n += len(o.Prices)
	}
	fmt.Fprintf(w, "corral prices import: %d prices of %d offers from %s, data of %s\n", n, len(r.Catalog.Offers), path, r.Catalog.AsOf)
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "  left out: %s\n", s)
	}
}

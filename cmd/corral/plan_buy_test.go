package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var updatePlan = flag.Bool("update-plan", false, "rewrite testdata/plan-buy.golden")

// The plan's text report for 28 days of H100 demand on p5 (8-GPU
// instances) at a 1-year price, 16 GPUs already held: whole instances to
// buy beyond them, the hourly commitment, the year's obligation and the
// extrapolation said, compared byte for byte with testdata/plan-buy.golden
// (rewrite with -update-plan and review the diff).
func TestPlanTextGolden(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("hour,gpu_model,gpus\n")
	for h := 0; h < 28*24; h++ {
		// 24 GPUs at night, 43 by day, 60 one day in seven.
		n := 24
		if h%24 >= 8 && h%24 < 20 {
			n = 43
		}
		if (h/24)%7 == 3 && h%24 >= 10 && h%24 < 16 {
			n = 60
		}
		b.WriteString(itoa(h) + ",H100," + itoa(n) + "\n")
	}
	demand := filepath.Join(dir, "daily.csv")
	prices := filepath.Join(dir, "prices.yaml")
	os.WriteFile(demand, []byte(b.String()), 0o644)
	os.WriteFile(prices, []byte("offers:\n  - provider: aws\n    instance: p5.48xlarge\n    region: us-east-1\n    prices:\n      reserved-1y: {usd_per_hour: 36.0, source: example 1-year rate, seen: 2026-11-20}\n"), 0o644)
	out, errOut, code := runCLI(t, "plan", "--demand", demand, "--prices", prices, "--term", "1y", "--held", "H100=16", "--now", "2026-12-01", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	out = strings.ReplaceAll(out, dir, "DIR")
	golden := filepath.Join("testdata", "plan-buy.golden")
	if *updatePlan {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("plan text differs from %s (rewrite with -update-plan and review):\n%s", golden, out)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// corral plan says how its commitment is billed, with coverage and
// utilisation, in text, JSON and HTML: a 1-year commitment is a discount, a
// Capacity Block is capacity to fill. Demand 2 GPUs every hour and 10 in
// one hour of four: 2 committed cover 2 of 4 GPU-hours a hour on average
// (8 of 16 over 4 hours, coverage 50%) and are always used (utilisation
// 100%).
func TestPlanSaysKindCoverageAndUtilisation(t *testing.T) {
	dir := t.TempDir()
	demand, prices := filepath.Join(dir, "d.csv"), filepath.Join(dir, "prices.yaml")
	os.WriteFile(demand, []byte("hour,gpu_model,gpus\n0,H100,10\n1,H100,2\n2,H100,2\n3,H100,2\n"), 0o644)
	os.WriteFile(prices, []byte("offers:\n  - provider: aws\n    instance: p5.48xlarge\n    region: us-east-1\n    prices:\n      reserved-1y: {usd_per_hour: 36.0, source: example 1-year rate, seen: 2026-11-20}\n"), 0o644)
	for _, tt := range []struct {
		term, kind, text string
	}{
		{"1y", "discount", "H100-80GB: 2 GPUs, discount, applied to matching usage in any node of its scope"},
		{"block", "capacity", "H100-80GB: 2 GPUs, capacity, nodes to fill"},
	} {
		jsonPath, page := filepath.Join(dir, tt.term+".json"), filepath.Join(dir, tt.term+".html")
		out, errOut, code := runCLI(t, "plan", "--demand", demand, "--prices", prices, "--term", tt.term, "--allow-expired",
			"--now", "2026-12-01", "--quiet", "--json", jsonPath, "--html", page)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.term, code, errOut)
		}
		for _, want := range []string{tt.text, "coverage 50.0% (8 of 16 GPU-hours of usage), utilisation 100.0% (8 of 8 committed GPU-hours used; $0 paid unused)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: text lacks %q:\n%s", tt.term, want, out)
			}
		}
		var doc struct {
			Plan struct {
				Models []struct {
					Kind    string `json:"kind"`
					Billing struct {
						Coverage    float64 `json:"coverage"`
						Utilisation float64 `json:"utilisation"`
					} `json:"billing"`
				} `json:"models"`
			} `json:"plan"`
		}
		data, err := os.ReadFile(jsonPath)
		if err != nil || json.Unmarshal(data, &doc) != nil || len(doc.Plan.Models) != 1 {
			t.Fatalf("%s: JSON %v: %s", tt.term, err, data)
		}
		if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), `id="commitment-table"`) || !strings.Contains(string(html), ">"+tt.kind+"<") {
			t.Errorf("%s: the HTML report has no commitment table saying %s (%v)", tt.term, tt.kind, err)
		}
		if m := doc.Plan.Models[0]; m.Kind != tt.kind || m.Billing.Coverage != 0.5 || m.Billing.Utilisation != 1 {
			t.Errorf("%s: JSON kind %q coverage %g utilisation %g, want %s, 0.5, 1", tt.term, m.Kind, m.Billing.Coverage, m.Billing.Utilisation, tt.kind)
		}
	}
}

package main

import (
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

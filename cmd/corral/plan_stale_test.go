package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// h100Demand writes a day of H100 demand between 8 and 24 GPUs.
func h100Demand(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("hour,gpu_model,gpus\n")
	for h := 0; h < 24; h++ {
		b.WriteString(strings.Join([]string{strconv.Itoa(h), "H100", strconv.Itoa(8 + (h%3)*8)}, ",") + "\n")
	}
	path := filepath.Join(dir, "h100.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The default plan (a Capacity Block) has only an expired rate for H100:
// it refuses and names the flag; with --allow-expired it plans, and the
// text, the JSON and the HTML each say EXPIRED and STALE with the price's
// age and source where the reader reads the plan.
func TestPlanSaysExpiredAndStaleInTextJSONAndHTML(t *testing.T) {
	dir := t.TempDir()
	demand := h100Demand(t, dir)
	_, errOut, code := runCLI(t, "plan", "--demand", demand, "--now", "2026-12-01", "--quiet")
	if code == 0 || !strings.Contains(errOut, "only expired ones") || !strings.Contains(errOut, "--allow-expired") {
		t.Fatalf("default plan on an expired price: exit %d: %s", code, errOut)
	}
	jsonPath, htmlPath := filepath.Join(dir, "plan.json"), filepath.Join(dir, "plan.html")
	out, errOut, code := runCLI(t, "plan", "--demand", demand, "--now", "2026-12-01", "--quiet", "--allow-expired",
		"--spot-share", "0.5", "--json", jsonPath, "--html", htmlPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	expired := "EXPIRED: aws p5.48xlarge us-east-1 reserved-block: valid until 2024-12-31; data of 2024-12-31, 700 days old on 2026-12-01; source http://sibshop.uat.jiralog.com/ec2/capacityblocks/pricing"
	stale := "STALE: aws p5.48xlarge us-east-1 spot: older than 90 days; data of 2025-06-04, 545 days old on 2026-12-01; source https://github.com/skypilot-org"
	for _, want := range []string{"WARNING " + expired, "WARNING " + stale} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	var doc struct {
		Plan struct {
			Warnings []struct {
				State   string `json:"state"`
				AgeDays int    `json:"age_days"`
				Source  string `json:"source"`
				Message string `json:"message"`
			} `json:"price_warnings"`
		} `json:"plan"`
	}
	readJSONFile(t, jsonPath, &doc)
	states := map[string]int{}
	for _, w := range doc.Plan.Warnings {
		states[w.State] = w.AgeDays
		if w.Source == "" || !strings.HasPrefix(w.Message, w.State+": ") {
			t.Errorf("json warning %+v", w)
		}
	}
	if states["EXPIRED"] != 700 || states["STALE"] != 545 {
		t.Errorf("json warnings %+v", doc.Plan.Warnings)
	}
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"WARNING EXPIRED: aws p5.48xlarge us-east-1 reserved-block: valid until 2024-12-31", "WARNING STALE: aws p5.48xlarge us-east-1 spot"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("html lacks %q", want)
		}
	}
}

// A current commitment price from a prices file is used with no warning
// about it; the 1y plan needs no flag.
func TestPlanOnCurrentPriceHasNoExpiredWarning(t *testing.T) {
	dir := t.TempDir()
	demand := h100Demand(t, dir)
	prices := filepath.Join(dir, "p.yaml")
	os.WriteFile(prices, []byte("offers:\n  - provider: aws\n    instance: p5.48xlarge\n    region: us-east-1\n    prices:\n      reserved-1y: {usd_per_hour: 35.2, source: our agreement, seen: 2026-11-20}\n"), 0o644)
	out, errOut, code := runCLI(t, "plan", "--demand", demand, "--now", "2026-12-01", "--quiet", "--term", "1y", "--prices", prices)
	if code != 0 || strings.Contains(out, "EXPIRED") || strings.Contains(out, "WARNING") {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
}

// Input no price or demand can be is refused with the file, line and why,
// and a demand at the bound gives outputs of bounded size.
func TestPlanRefusesImplausibleInput(t *testing.T) {
	dir := t.TempDir()
	demand := h100Demand(t, dir)
	tests := []struct{ name, prices, want string }{
		{"a price of 1e300", "      reserved-1y: {usd_per_hour: 1e300, source: s, seen: 2026-11-01}\n", "usd_per_hour 1e+300: want the hourly price of one instance"},
		{"seen in the future", "      reserved-1y: {usd_per_hour: 35, source: s, seen: 2030-01-01}\n", "seen 2030-01-01 is after today (2026-12-01)"},
		{"spot above on-demand", "      reserved-1y: {usd_per_hour: 35, source: s, seen: 2026-11-01}\n      spot: {usd_per_hour: 80, source: s, seen: 2026-11-01}\n", "spot $80 an hour is above on-demand $55.04: refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prices := filepath.Join(dir, "p.yaml")
			body := "offers:\n  - provider: aws\n    instance: p5.48xlarge\n    region: us-east-1\n    prices:\n" + tt.prices
			if err := os.WriteFile(prices, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := runCLI(t, "plan", "--demand", demand, "--now", "2026-12-01", "--quiet", "--term", "1y", "--prices", prices)
			if code == 0 || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, prices+":6:") && !strings.Contains(errOut, prices+":7:") {
				t.Errorf("exit %d: %s", code, errOut)
			}
		})
	}
	t.Run("a million GPUs", func(t *testing.T) {
		big := filepath.Join(dir, "big.csv")
		os.WriteFile(big, []byte("hour,gpu_model,gpus\n0,A10G,1000000\n1,A10G,999999\n2,A10G,3\n"), 0o644)
		prices := filepath.Join(dir, "g5.yaml")
		os.WriteFile(prices, []byte("offers:\n  - provider: aws\n    instance: g5.xlarge\n    region: us-east-1\n    prices:\n      reserved-1y: {usd_per_hour: 0.6036, source: s, seen: 2026-11-01}\n"), 0o644)
		htmlPath, jsonPath := filepath.Join(dir, "big.html"), filepath.Join(dir, "big.json")
		_, errOut, code := runCLI(t, "plan", "--demand", big, "--now", "2026-12-01", "--quiet", "--term", "1y", "--prices", prices,
			"--html", htmlPath, "--json", jsonPath)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, p := range []string{htmlPath, jsonPath} {
			if st, err := os.Stat(p); err != nil || st.Size() > 1<<20 {
				t.Errorf("%s: %v, %d bytes, want at most 1 MiB", p, err, st.Size())
			}
		}
	})
}

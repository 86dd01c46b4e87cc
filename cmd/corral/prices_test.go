package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corral prices lists every figure with its source and age on the day
// given, marks old data, lists what is unknown, and takes a prices file.
func TestPricesCommand(t *testing.T) {
	out, errOut, code := runCLI(t, "prices", "--now", "2026-12-01")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"as of 2026-11-30", "p5.48xlarge", "reserved-block", "545d  STALE", "15-20%/month",
		"A100-80GB-PCIE", "A100-80GB-SXM", "not known", "1- and 3-year commitment prices"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.yaml")
	os.WriteFile(mine, []byte("offers:\n  - provider: aws\n    instance: p5.48xlarge\n    region: us-east-1\n    prices:\n      reserved-1y: {usd_per_hour: 33, source: our contract, seen: 2026-11-20}\n"), 0o644)
	out, errOut, code = runCLI(t, "prices", "--now", "2026-12-01", "--prices", mine, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		AsOf  string `json:"as_of"`
		Lines []struct {
			Instance string  `json:"instance"`
			Capacity string  `json:"capacity"`
			USD      float64 `json:"usd_per_gpu_hour"`
			Source   string  `json:"source"`
			Seen     string  `json:"seen"`
			AgeDays  int     `json:"age_days"`
			Stale    bool    `json:"stale"`
		} `json:"lines"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range doc.Lines {
		if l.Source == "" || l.Seen == "" {
			t.Errorf("%+v: no source or date", l)
		}
		if l.Instance == "p5.48xlarge" && l.Capacity == "reserved-1y" {
			found = l.USD == 33.0/8 && l.AgeDays == 11 && !l.Stale
		}
	}
	if !found || doc.AsOf != "2026-11-30" {
		t.Errorf("own reserved-1y price not listed as given, or as_of %q", doc.AsOf)
	}
	if _, errOut, code := runCLI(t, "prices", "--now", "yesterday"); code == 0 || !strings.Contains(errOut, "YYYY-MM-DD") {
		t.Errorf("bad --now: exit %d, %s", code, errOut)
	}
}

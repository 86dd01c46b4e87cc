package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planFiles writes a packed and an unpacked demand and a prices file with
// 1-year prices for A10G and T4.
func planFiles(t *testing.T) (dir string) {
	t.Helper()
	dir = t.TempDir()
	files := map[string]string{
		"packed.csv": "hour,gpu_model,gpus\n0,A10G,3\n1,A10G,2\n2,A10G,2\n3,A10G,2\n0,T4,1\n1,T4,1\n2,T4,1\n3,T4,1\n",
		// The same work on whole cards: two more A10G, one more T4, every hour.
		"unpacked.csv": "hour,gpu_model,gpus\n0,A10G,5\n1,A10G,4\n2,A10G,4\n3,A10G,4\n0,T4,2\n1,T4,2\n2,T4,2\n3,T4,2\n",
		"prices.yaml": `offers:
  - provider: aws
    instance: g5.xlarge
    region: us-east-1
    prices:
      reserved-1y: {usd_per_hour: 0.6036, source: test quote, seen: 2026-11-01}
  - provider: aws
    instance: g4dn.xlarge
    region: us-east-1
    prices:
      reserved-1y: {usd_per_hour: 0.3156, source: test quote, seen: 2026-11-01}
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPlanCommand(t *testing.T) {
	dir := planFiles(t)
	jsonPath, htmlPath := filepath.Join(dir, "plan.json"), filepath.Join(dir, "plan.html")
	out, errOut, code := runCLI(t, "plan", "--demand", filepath.Join(dir, "packed.csv"), "--unpacked", filepath.Join(dir, "unpacked.csv"),
		"--prices", filepath.Join(dir, "prices.yaml"), "--term", "1y", "--json", jsonPath, "--html", htmlPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"A10G", "T4", "g5.xlarge", "packed vs unpacked", "break-even"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var doc struct {
		Version int `json:"version"`
		Plan    struct {
			Models []struct {
				Model     string `json:"gpu_model"`
				Committed int    `json:"recommended_committed_gpus"`
				Cost      float64
				Prices    struct {
					Committed struct {
						USD    float64 `json:"usd_per_gpu_hour"`
						Source string  `json:"source"`
					} `json:"committed"`
				} `json:"prices"`
				Curve []struct {
					Committed int     `json:"committed_gpus"`
					Cost      float64 `json:"cost_usd"`
				} `json:"cost_by_committed_level"`
			} `json:"models"`
		} `json:"plan"`
		Differences []struct {
			Model         string `json:"gpu_model"`
			UnpackedLevel int    `json:"unpacked_committed_gpus"`
		} `json:"differences"`
	}
	readJSONFile(t, jsonPath, &doc)
	if doc.Version != 1 || len(doc.Plan.Models) != 2 || len(doc.Differences) != 2 {
		t.Fatalf("json: %+v", doc)
	}
	a10g := doc.Plan.Models[0]
	// R/P = 0.6036/1.006 = 0.6: the third A10G is busy 1 hour in 4: commit 2.
	if a10g.Model != "A10G" || a10g.Committed != 2 || a10g.Prices.Committed.Source != "test quote" || len(a10g.Curve) != 4 {
		t.Errorf("A10G plan %+v", a10g)
	}
	if doc.Differences[1].Model != "T4" || doc.Differences[1].UnpackedLevel != 2 {
		t.Errorf("T4 difference %+v", doc.Differences[1])
	}
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{`<svg id="timeline-a10g"`, `<svg id="curve-t4"`, `<svg id="cost-by-capacity"`, `id="data"`} {
		if !strings.Contains(string(page), id) {
			t.Errorf("html lacks %s", id)
		}
	}
}

func TestPlanCommandUnknownPrices(t *testing.T) {
	dir := planFiles(t)
	_, errOut, code := runCLI(t, "plan", "--demand", filepath.Join(dir, "packed.csv"), "--term", "3y")
	if code == 0 || !strings.Contains(errOut, "no reserved-3y price known for A10G") || !strings.Contains(errOut, "--prices") && !strings.Contains(errOut, "prices file") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	// Without a prices file, T4 and A10G have no commitment price: both skipped, an error.
	_, errOut, code = runCLI(t, "plan", "--demand", filepath.Join(dir, "packed.csv"))
	if code == 0 || !strings.Contains(errOut, "skipped T4") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestPlanCommandBadInput(t *testing.T) {
	dir := planFiles(t)
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("hour,gpu_model,gpus\n0,A10G,1\n1,A10G,lots\n"), 0o644)
	// 1e8 GPUs once made a cost curve of 1e8 points (memory ran out);
	// 1e300 planned a cost of +Inf and exited 0.
	huge, inf := filepath.Join(dir, "huge.csv"), filepath.Join(dir, "inf.csv")
	os.WriteFile(huge, []byte("hour,gpu_model,gpus\n0,A10G,1\n1,A10G,1e8\n"), 0o644)
	os.WriteFile(inf, []byte("0,A10G,1\n1,A10G,1e300\n"), 0o644)
	badPrices := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badPrices, []byte("offers:\n  - provider: aws\n    instance: g5.xlarge\n    region: us-east-1\n    prices:\n      reserved-1y: {usd_per_hour: 1, seen: 2026-01-01}\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "--demand is required"},
		{[]string{"--demand", bad}, "bad.csv:3: gpus"},
		{[]string{"--demand", filepath.Join(dir, "packed.csv"), "--term", "2y"}, `--term "2y"`},
		{[]string{"--demand", filepath.Join(dir, "packed.csv"), "--prices", badPrices}, "bad.yaml:6:"},
		{[]string{"--demand", filepath.Join(dir, "packed.csv"), "--family", "H999=x"}, "unknown GPU model"},
		{[]string{"--demand", filepath.Join(dir, "none.csv")}, "read demand"},
		{[]string{"--demand", huge, "--prices", filepath.Join(dir, "prices.yaml")}, "huge.csv:3: gpus \"1e8\": want a number from 0 to 1000000"},
		{[]string{"--demand", inf, "--prices", filepath.Join(dir, "prices.yaml")}, "inf.csv:2: gpus \"1e300\""},
	}
	for _, tt := range tests {
		_, errOut, code := runCLI(t, append([]string{"plan"}, tt.args...)...)
		if code == 0 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
}

// Columns in another order are read by their header names: the plan is
// the same as for the file in the usual order.
func TestPlanCommandColumnsByName(t *testing.T) {
	dir := planFiles(t)
	swapped := filepath.Join(dir, "swapped.csv")
	os.WriteFile(swapped, []byte("gpu_model,gpus,hour\nA10G,3,0\nA10G,2,1\nA10G,2,2\nA10G,2,3\nT4,1,0\nT4,1,1\nT4,1,2\nT4,1,3\n"), 0o644)
	prices := filepath.Join(dir, "prices.yaml")
	want, errOut, code := runCLI(t, "plan", "--demand", filepath.Join(dir, "packed.csv"), "--prices", prices, "--term", "1y")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, errOut, code := runCLI(t, "plan", "--demand", swapped, "--prices", prices, "--term", "1y")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Replace(want, "packed.csv", "swapped.csv", 1) != got {
		t.Errorf("plan of swapped columns differs:\n%s\nwant:\n%s", got, want)
	}
}

// With --spot-share, the all-on-demand column is every GPU-hour at the
// catalog's on-demand price, not the on-demand and spot mix.
func TestPlanCommandAllOnDemandWithSpotShare(t *testing.T) {
	dir := planFiles(t)
	jsonPath := filepath.Join(dir, "plan.json")
	_, errOut, code := runCLI(t, "plan", "--demand", filepath.Join(dir, "packed.csv"), "--prices", filepath.Join(dir, "prices.yaml"),
		"--spot-share", "0.5", "--term", "1y", "--json", jsonPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Plan struct {
			Models []struct {
				Model        string  `json:"gpu_model"`
				GPUHours     float64 `json:"demand_gpu_hours"`
				AllOnDemand  float64 `json:"all_on_demand_cost_usd"`
				NoCommitment float64 `json:"no_commitment_cost_usd"`
				Prices       struct {
					OnDemand struct {
						USD float64 `json:"usd_per_gpu_hour"`
					} `json:"on_demand"`
				} `json:"prices"`
			} `json:"models"`
		} `json:"plan"`
	}
	readJSONFile(t, jsonPath, &doc)
	for _, m := range doc.Plan.Models {
		want := m.GPUHours * m.Prices.OnDemand.USD
		if math.Abs(m.AllOnDemand-want) > 1e-6 || m.NoCommitment >= m.AllOnDemand {
			t.Errorf("%s: all on demand %g, want %g GPU-h x %g = %g; no commitment %g, want less (spot)",
				m.Model, m.AllOnDemand, m.GPUHours, m.Prices.OnDemand.USD, want, m.NoCommitment)
		}
	}
}

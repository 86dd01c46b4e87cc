package tco

import (
	"math"
	"strings"
	"testing"
)

func TestDefaultsAreLabelledAssumptionsWithReasons(t *testing.T) {
	ps, err := Defaults()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"managed-training", "kube-default", "kube-packed", "kube-corral", "hpc-slurm"}
	if len(ps) != len(want) {
		t.Fatalf("%d profiles, want %v", len(ps), want)
	}
	for i, p := range ps {
		if p.Name != want[i] {
			t.Errorf("profile %d is %q, want %q", i, p.Name, want[i])
		}
		if p.ComputeReason == "" {
			t.Errorf("%s: no reason for its compute multiplier", p.Name)
		}
		for _, k := range []string{"operations_staff", "control_plane", "tools", "storage_networking"} {
			if p.Reasons[k] == "" {
				t.Errorf("%s: no reason for %s", p.Name, k)
			}
		}
	}
	if !strings.Contains(string(profilesYAML), "ASSUMPTION") {
		t.Error("profiles.yaml does not say its figures are assumptions")
	}
}

func TestCompareHandComputed(t *testing.T) {
	ps, err := Parse([]byte(`
profiles:
  - name: managed
    compute_multiplier: 1.2
    monthly_usd: {operations_staff: 1000, control_plane: 0, tools: 100, storage_networking: 500}
  - name: kube
    compute_multiplier: 1.0
    monthly_usd: {operations_staff: 4000, control_plane: 75, tools: 200, storage_networking: 500}
`), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Compare(ps, map[string]Input{
		"managed": {GPUHoursBought: 1000, USDPerGPUHour: 5, MeanWaitHours: 0.1, P99WaitHours: 1},
		"kube":    {GPUHoursBought: 1400, USDPerGPUHour: 5, MeanWaitHours: 0.5, P99WaitHours: 6},
	})
	if err != nil {
		t.Fatal(err)
	}
	// managed: 1000*5*1.2 = 6000 + 500 + 1000 + 100 = 7600
	// kube: 1400*5 = 7000 + 500 + 4075 + 200 = 11775
	want := []struct{ compute, ops, total float64 }{{6000, 1000, 7600}, {7000, 4075, 11775}}
	for i, w := range want {
		r := rows[i]
		if math.Abs(r.ComputeUSD-w.compute) > 1e-9 || math.Abs(r.OperationsUSD-w.ops) > 1e-9 || math.Abs(r.TotalUSD-w.total) > 1e-9 {
			t.Errorf("row %d: %+v, want %+v", i, r, w)
		}
	}
	if rows[1].P99WaitHours != 6 {
		t.Errorf("waits not carried: %+v", rows[1])
	}
	if _, err := Compare(ps, map[string]Input{"managed": {}}); err == nil || !strings.Contains(err.Error(), "kube") {
		t.Errorf("missing input: %v", err)
	}
}

// Two platforms that buy the same for different work are told apart by
// the cost of a useful GPU-hour and the work each left undone.
func TestCompareCostPerUsefulGPUHour(t *testing.T) {
	ps, err := Parse([]byte(`
profiles:
  - name: a
    compute_multiplier: 1.0
    monthly_usd: {operations_staff: 0, control_plane: 0, tools: 0, storage_networking: 1000}
  - name: b
    compute_multiplier: 1.0
    monthly_usd: {operations_staff: 0, control_plane: 0, tools: 0, storage_networking: 1000}
  - name: idle
    compute_multiplier: 1.0
    monthly_usd: {operations_staff: 0, control_plane: 0, tools: 0, storage_networking: 0}
`), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Compare(ps, map[string]Input{
		"a":    {GPUHoursBought: 1000, USDPerGPUHour: 4, UsefulGPUHours: 800},
		"b":    {GPUHoursBought: 1000, USDPerGPUHour: 4, UsefulGPUHours: 400, UndoneGPUHours: 400},
		"idle": {GPUHoursBought: 10, USDPerGPUHour: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Both total 5000: a did 800 GPU-h of work (6.25 each), b 400 (12.50) and left 400 undone.
	if rows[0].TotalUSD != rows[1].TotalUSD || *rows[0].USDPerUsefulGPUHour != 6.25 || *rows[1].USDPerUsefulGPUHour != 12.5 {
		t.Errorf("a %+v, b %+v", rows[0], rows[1])
	}
	if rows[1].UndoneGPUHours != 400 || rows[1].UsefulGPUHours != 400 {
		t.Errorf("b: useful %g, undone %g; want 400, 400", rows[1].UsefulGPUHours, rows[1].UndoneGPUHours)
	}
	if rows[2].USDPerUsefulGPUHour != nil {
		t.Errorf("no useful work, cost per useful GPU-hour %v, want none", *rows[2].USDPerUsefulGPUHour)
	}
	if _, err := Compare(ps[:1], map[string]Input{"a": {UndoneGPUHours: -1}}); err == nil {
		t.Error("negative work undone accepted")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"profiles:\n  - name: a\n    compute_multiplier: 0\n", "compute_multiplier"},
		{"profiles:\n  - name: a\n    compute_multiplier: 1\n  - name: a\n    compute_multiplier: 1\n", "twice"},
		{"profiles:\n  - name: a\n    compute_multiplier: 1\n    colour: red\n", "line 4"},
		{"profiles: []\n", "no profiles"},
	} {
		if _, err := Parse([]byte(tt.yaml), "p.yaml"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %q", tt.yaml, err, tt.want)
		}
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/browsertest"
)

// corral sim --moves prints the five moves alone and together with the
// catalog lines they used, says which saves most, writes JSON whose
// savings are against the baseline, and an HTML page whose numbers match
// it in a browser.
func TestSimMovesCommand(t *testing.T) {
	dir := t.TempDir()
	jsonPath, page := filepath.Join(dir, "moves.json"), filepath.Join(dir, "moves.html")
	out, errOut, code := runCLI(t, "sim", "--moves", "--nodes", "8", "--days", "4", "--seed", "3", "--now", "2026-12-01",
		"--json", jsonPath, "--html", page)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"baseline", "mig", "timeslice", "split", "spot", "floor", "all but floor", "saves most on this workload",
		"p5.48xlarge us-east-1 spot", "interruption band 15-20%", "545 days old on 2026-12-01"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var doc struct {
		Baseline struct {
			Cost float64 `json:"cost_usd"`
			Used float64 `json:"work_done_gpu_hours"`
		} `json:"baseline"`
		Moves []struct {
			Name   string  `json:"move"`
			Cost   float64 `json:"cost_usd"`
			Used   float64 `json:"work_done_gpu_hours"`
			Saving float64 `json:"saving_usd"`
		} `json:"moves"`
		Best string `json:"best_move"`
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Moves) != 5 || doc.Baseline.Cost <= 0 || doc.Best == "" {
		t.Fatalf("report %+v", doc)
	}
	for _, m := range doc.Moves {
		if d := doc.Baseline.Cost - m.Cost/m.Used*doc.Baseline.Used - m.Saving; d > 1e-6 || d < -1e-6 {
			t.Errorf("%s: saving %g, baseline %g, cost %g", m.Name, m.Saving, doc.Baseline.Cost, m.Cost)
		}
	}
	if _, errOut, code := runCLI(t, "sim", "--moves", "--workload", "openb"); code == 0 || !strings.Contains(errOut, "generated") {
		t.Errorf("--moves with openb: exit %d, %s", code, errOut)
	}
	b := browsertest.New(t)
	got := b.Open(t, "file://"+page, "#data")
	if len(got.Problems) > 0 {
		t.Errorf("page reported problems:\n%s", strings.Join(got.Problems, "\n"))
	}
	if !slices.Contains(got.ChartIDs, "cost-by-capacity") {
		t.Errorf("no cost chart (charts: %v)", got.ChartIDs)
	}
	// 8 replays x 11 numbers, and the catalog lines.
	if got.Checked < 88 || len(got.Bad) > 0 {
		t.Errorf("%d table numbers checked; not matching the embedded JSON: %v", got.Checked, got.Bad)
	}
	if empty := got.Empty(0.001); len(empty) > 0 {
		t.Errorf("charts with nothing drawn in them: %v", empty)
	}
}

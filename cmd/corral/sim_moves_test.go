package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
		"p5.48xlarge us-east-1 spot", "interruption band 15-20%", "545 days old on 2026-12-01",
		"floor-1y", "floor-block", "the floor, by kind of commitment", "reserved-block  capacity", "planner = brute force", "no reserved-1y price known"} {
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
	readJSONFile(t, jsonPath, &doc)
	if len(doc.Moves) != 6 || doc.Baseline.Cost <= 0 || doc.Best == "" {
		t.Fatalf("report %+v", doc)
	}
	for _, m := range doc.Moves {
		if d := doc.Baseline.Cost - m.Cost/m.Used*doc.Baseline.Used - m.Saving; d > 1e-6 || d < -1e-6 {
			t.Errorf("%s: saving %g, baseline %g, cost %g", m.Name, m.Saving, doc.Baseline.Cost, m.Cost)
		}
	}
	for _, bad := range [][]string{{"--floor-terms", "5y"}, {"--reserved-term", "1y"}} {
		if _, errOut, code := runCLI(t, append([]string{"sim", "--moves"}, bad...)...); code != 2 || !strings.Contains(errOut, "--floor-terms") {
			t.Errorf("--moves %v: exit %d, %s", bad, code, errOut)
		}
	}
	if _, errOut, code := runCLI(t, "sim", "--moves", "--workload", "openb"); code == 0 || !strings.Contains(errOut, "jobs file") {
		t.Errorf("--moves with openb: exit %d, %s", code, errOut)
	}
	b := browsertest.New(t)
	got := b.Open(t, "file://"+page, "#data")
	if len(got.Problems) > 0 {
		t.Errorf("page reported problems:\n%s", strings.Join(got.Problems, "\n"))
	}
	for _, id := range []string{"savings-chart", "cost-by-capacity", "efficiency-total", "efficiency-per-useful"} {
		if !slices.Contains(got.ChartIDs, id) {
			t.Errorf("no chart %q (charts: %v)", id, got.ChartIDs)
		}
	}
	// 8 replays x 11 numbers, and the catalog lines.
	if got.Checked < 88 || len(got.Bad) > 0 {
		t.Errorf("%d table numbers checked; not matching the embedded JSON: %v", got.Checked, got.Bad)
	}
	if empty := got.Empty(0.001); len(empty) > 0 {
		t.Errorf("charts with nothing drawn in them: %v", empty)
	}
}

// A recorded workload's class column decides which moves apply: notebooks
// on shares of a GPU, training on spot.
func TestSimMovesRecordedWorkload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jobs.csv")
	var b strings.Builder
	b.WriteString("name,submit_s,duration_s,tenant,tasks,gpus,share,checkpoint_s,preemptible,class\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "nb-%d,%d,7200,lab,1,,0.25,,false,notebook\n", i, i*900)
		fmt.Fprintf(&b, "tr-%d,%d,14400,lab,1,8,,1800,true,training\n", i, i*1800)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	out, errOut, code := runCLI(t, "sim", "--moves", "--workload", "jobs", path, "--nodes", "8", "--now", "2026-12-01")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"jobs workload", "80 jobs", "timeslice", "spot"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	saving := map[string]float64{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if _, seen := saving[f0(f)]; len(f) > 6 && !seen && (f[0] == "timeslice" || f[0] == "spot") {
			v, _ := strconv.ParseFloat(strings.TrimSuffix(f[6], "%"), 64)
			saving[f[0]] = v
		}
	}
	if saving["timeslice"] <= 0 || saving["spot"] <= 0 {
		t.Errorf("quarter-GPU notebooks on shares and checkpointed training on spot should both save: %v\n%s", saving, out)
	}
}

func f0(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

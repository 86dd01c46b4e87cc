package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/browsertest"
)

// corral sim --html writes a page that opens in a real browser without
// errors, has every chart (GPUs over time per policy, cost, waits,
// fragmentation), and shows in its tables the numbers of its JSON.
func TestSimHTMLReportOpensInABrowser(t *testing.T) {
	b := browsertest.New(t)
	page := filepath.Join(t.TempDir(), "sim.html")
	_, errOut, code := runCLI(t, "sim", "--nodes", "32", "--days", "3", "--html", page)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := b.Open(t, "file://"+page, "#data")
	if len(got.Problems) > 0 {
		t.Errorf("page reported problems:\n%s", strings.Join(got.Problems, "\n"))
	}
	want := []string{"waits", "fragmentation", "cost-by-pool", "cost-by-capacity"}
	for _, policy := range []string{"corral", "kube-default", "kueue-like", "slurm-like"} {
		want = append(want, "timeline-"+policy)
	}
	for _, id := range want {
		if !slices.Contains(got.ChartIDs, id) {
			t.Errorf("chart %q missing (charts: %v)", id, got.ChartIDs)
		}
	}
	// 4 policies x 8 summary numbers, and each policy's bill.
	if got.Checked < 32 || len(got.Bad) > 0 {
		t.Errorf("%d table numbers checked; not matching the embedded JSON: %v", got.Checked, got.Bad)
	}
}

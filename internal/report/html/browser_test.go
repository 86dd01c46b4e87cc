package html

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/browsertest"
)

func writeFile(t *testing.T, path string, r Report) {
	t.Helper()
	var b strings.Builder
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The report opens in a real browser without errors, shows every chart,
// and every number in its tables is the one in its embedded JSON.
func TestBrowserOpensReport(t *testing.T) {
	b := browsertest.New(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	writeFile(t, path, smallReport(t))
	page := b.Open(t, "file://"+path, "#data")
	if len(page.Problems) > 0 {
		t.Errorf("page reported problems:\n%s", strings.Join(page.Problems, "\n"))
	}
	for _, want := range chartIDs {
		if !slices.Contains(page.ChartIDs, want) {
			t.Errorf("chart %q not in the page (charts: %v)", want, page.ChartIDs)
		}
	}
	if page.Checked == 0 || len(page.Bad) > 0 {
		t.Errorf("%d table numbers checked; not matching the embedded data: %v", page.Checked, page.Bad)
	}
	if empty := page.Empty(minInk); len(empty) > 0 {
		t.Errorf("charts with nothing drawn in them: %v (ink %v)", empty, page.Ink)
	}

	// The check itself must catch a number that disagrees with the data.
	wrong := Report{Title: "wrong", Data: map[string]float64{"x": 2},
		Tables: []Table{{ID: "t", Title: "t", Columns: []string{"x"}, Rows: [][]Cell{{Num(3, 0, "x")}}}}}
	wrongPath := filepath.Join(dir, "wrong.html")
	writeFile(t, wrongPath, wrong)
	if got := b.Open(t, "file://"+wrongPath, "#data"); !slices.Contains(got.Bad, "x: shown 3, data 2") {
		t.Errorf("the table check missed a wrong number: %v", got.Bad)
	}

	// And the screenshot check must catch a chart with axes, legend and a
	// capacity line but no data drawn.
	nan := math.NaN()
	blank := Report{Title: "blank", Data: map[string]float64{}, Timelines: []Timeline{
		{Name: "none", Hours: []float64{0, 1}, Series: []Values{{Name: "used", Values: []float64{nan, nan}}}, Capacity: 8},
		{Name: "some", Hours: []float64{0, 1}, Series: []Values{{Name: "used", Values: []float64{2, 3}}}, Capacity: 8}}}
	blankPath := filepath.Join(dir, "blank.html")
	writeFile(t, blankPath, blank)
	if got := b.Open(t, "file://"+blankPath, "#data").Empty(minInk); !slices.Equal(got, []string{"timeline-none"}) {
		t.Errorf("empty charts found: %v, want [timeline-none]", got)
	}
}

// minInk is the share of a chart's plot area that must be in colour for
// it to count as showing data: a line across it is several times more.
const minInk = 0.001

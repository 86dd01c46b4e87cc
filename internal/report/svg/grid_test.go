package svg

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func gridCharts() []Chart {
	a := sample()
	b := sample()
	b.Title, b.Series, b.Marks = "corral only, fixed axes", b.Series[:1], nil
	b.XMin, b.XMax, b.YMin, b.YMax = 0, 140, 0, 120
	b.Width, b.Height = 480, 320
	c := sample()
	c.Title, c.HLines = "", nil
	return []Chart{a, b, c}
}

func TestGridGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteGrid(&b, gridCharts(), 2); err != nil {
		t.Fatal(err)
	}
	golden(t, "grid.svg", b.Bytes())
}

func TestGridWellFormed(t *testing.T) {
	charts := gridCharts()
	var b bytes.Buffer
	if err := WriteGrid(&b, charts, 2); err != nil {
		t.Fatal(err)
	}
	count, _ := elements(t, b.Bytes())
	want := 0
	for _, c := range charts {
		want += len(c.Series)
	}
	if count["path"] != want || count["clipPath"] != len(charts) {
		t.Errorf("%d paths and %d clip paths, want %d and %d", count["path"], count["clipPath"], want, len(charts))
	}
	// Two columns: 720 + 480 wide; two rows of 440.
	if !strings.Contains(b.String(), `viewBox="0 0 1200 880"`) {
		t.Errorf("grid is not 1200 x 880: %.200s", b.String())
	}
	for i := range charts {
		if n := strings.Count(b.String(), fmt.Sprintf(`id="c%d-plot"`, i)); n != 1 {
			t.Errorf("clip id of chart %d appears %d times, want 1", i, n)
		}
	}
}

func TestGridDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := WriteGrid(&a, gridCharts(), 3); err != nil {
		t.Fatal(err)
	}
	if err := WriteGrid(&b, gridCharts(), 3); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two renders of equal grids differ")
	}
}

func TestGridErrors(t *testing.T) {
	bad := sample()
	bad.Title, bad.Series[1].Mid = "bad", bad.Series[1].Mid[:3]
	tests := []struct {
		name    string
		charts  []Chart
		columns int
		want    error
		prefix  string
	}{
		{"no charts", nil, 2, errNoCharts, "grid: no charts"},
		{"zero columns", gridCharts(), 0, errColumns, "grid: columns must be positive: 0 columns"},
		{"bad chart", append(gridCharts(), bad), 2, errLength, `chart 3 "bad": series 1 "fgd": length mismatch`},
		{"empty chart", []Chart{sample(), {}}, 2, errNoSeries, "chart 1: no series"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			err := WriteGrid(&b, tt.charts, tt.columns)
			if !errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), tt.prefix) {
				t.Fatalf("WriteGrid error = %v, want %q (%v)", err, tt.prefix, tt.want)
			}
			if b.Len() != 0 {
				t.Errorf("WriteGrid wrote %d bytes before failing", b.Len())
			}
		})
	}
}

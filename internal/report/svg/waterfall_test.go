package svg

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

// Each change starts where the previous bar ended; a total runs from zero
// to the level so far, whatever its Value says unless it comes first.
func TestWaterfallBars(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []Step
		want  []WaterfallBar
	}{
		{"savings down to a total", []Step{{"baseline", 100, true}, {"spot", -30, false}, {"mig", -10, false}, {"all", 0, true}},
			[]WaterfallBar{{"baseline", 0, 100, true}, {"spot", 100, 70, false}, {"mig", 70, 60, false}, {"all", 0, 60, true}}},
		{"a step up undoes part of a saving", []Step{{"baseline", 50, true}, {"a", -20, false}, {"b", 5, false}, {"total", 999, true}},
			[]WaterfallBar{{"baseline", 0, 50, true}, {"a", 50, 30, false}, {"b", 30, 35, false}, {"total", 0, 35, true}}},
		{"no starting total: changes from zero, below it", []Step{{"x", -4, false}, {"y", 10, false}, {"sum", 0, true}},
			[]WaterfallBar{{"x", 0, -4, false}, {"y", -4, 6, false}, {"sum", 0, 6, true}}},
		{"a subtotal in the middle", []Step{{"start", 10, true}, {"a", -3, false}, {"sub", 0, true}, {"b", -2, false}},
			[]WaterfallBar{{"start", 0, 10, true}, {"a", 10, 7, false}, {"sub", 0, 7, true}, {"b", 7, 5, false}}},
	} {
		got, err := WaterfallBars(tc.steps)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: bars %v, want %v", tc.name, got, tc.want)
		}
	}
	if _, err := WaterfallBars(nil); err == nil {
		t.Error("no steps accepted")
	}
	if _, err := WaterfallBars([]Step{{"nan", math.NaN(), false}}); err == nil {
		t.Error("a NaN step accepted")
	}
}

// The drawn chart has a bar per step coloured by kind, signed values and
// the labels, and is the same on every rendering.
func TestWriteWaterfall(t *testing.T) {
	w := Waterfall{Title: "saving", YLabel: "USD", Steps: []Step{{"baseline", 1000, true}, {"spot", -300, false}, {"mix", 50, false}, {"all", 0, true}}}
	var a, b bytes.Buffer
	if err := WriteWaterfall(&a, w); err != nil {
		t.Fatal(err)
	}
	if err := WriteWaterfall(&b, w); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("renderings differ (%v)", err)
	}
	s := a.String()
	for _, want := range []string{`fill="` + inkTotal + `"><title>baseline: 1,000</title>`, `fill="` + inkDown + `"><title>spot: −300</title>`,
		`fill="` + inkUp + `"><title>mix: +50</title>`, `fill="` + inkTotal + `"><title>all: 750</title>`, `id="c0-plot"`, ">spot</text>"} {
		if !strings.Contains(s, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if err := WriteWaterfall(&a, Waterfall{Title: "tiny", Steps: w.Steps, Width: 50, Height: 50}); err == nil {
		t.Error("a chart too small to draw accepted")
	}
}

// An area is filled under the series in its colour, with a swatch in the
// legend and no line across it, and counts towards the y range.
func TestAreasShadeUnderSeries(t *testing.T) {
	c := Chart{Title: "shaded", Series: []Series{{Name: "demand", X: []float64{0, 1}, Mid: []float64{1, 2}, Lo: []float64{1, 2}, Hi: []float64{1, 2}}},
		Areas: []Area{{Name: "committed", Fill: "#123456", X: []float64{0, 1}, Lo: []float64{0, 0}, Hi: []float64{5, 5}}}}
	var b bytes.Buffer
	if err := Write(&b, c); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if n := strings.Count(s, `fill="#123456" fill-opacity="`+areaOpacity+`"`); n != 2 {
		t.Errorf("area drawn %d times (polygon and swatch), want 2", n)
	}
	if strings.Index(s, `<polygon points=`) > strings.Index(s, `<path d=`) {
		t.Error("the area is drawn over the line")
	}
	if !strings.Contains(s, ">5</text>") {
		t.Error("the y axis does not reach the area's top")
	}
	c.Areas[0].Hi = []float64{1}
	if err := Write(&b, c); err == nil {
		t.Error("an area with a short hi accepted")
	}
}

package svg

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.svg from the renderer")

// sample is a chart with everything in it: three series (one with a gap in
// the line and the band, one with a name to escape), marks and a lower
// bound. Its data come from integer arithmetic, exact on every platform.
func sample() Chart {
	nan := math.NaN()
	series := func(name string, slope, spread float64, gapAt int) Series {
		s := Series{Name: name}
		for i := 0; i <= 26; i++ {
			x := float64(5 * i)
			mid := slope*x - float64(i*i)/8
			s.X = append(s.X, x)
			s.Mid = append(s.Mid, mid)
			s.Lo = append(s.Lo, mid-spread*float64(i)/4)
			s.Hi = append(s.Hi, mid+spread*float64(i)/4)
		}
		if gapAt > 0 {
			s.Mid[gapAt], s.Lo[gapAt+1], s.Hi[gapAt+1] = nan, nan, nan
		}
		return s
	}
	return Chart{
		Title:  "GPU allocation rate vs arrived workload",
		XLabel: "arrived workload (% of GPU capacity)",
		YLabel: "GPUs allocated (%)",
		Series: []Series{
			series("corral", 0.9, 1, 0),
			series("fgd", 0.85, 2, 14),
			series("bestfit & <spread>", 0.8, 3, 0),
		},
		Marks:  []Mark{{At: 100, Label: "100% arrived"}, {At: 130, Label: "130%"}},
		HLines: []Mark{{At: 20, Label: "lower bound"}},
	}
}

func render(t *testing.T, c Chart) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, c); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b.Bytes()
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report/svg -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s; if the change is intended, run go test ./internal/report/svg -update and review the diff", path)
	}
}

func TestGolden(t *testing.T) {
	golden(t, "chart.svg", render(t, sample()))
}

func TestDeterministic(t *testing.T) {
	a, b := render(t, sample()), render(t, sample())
	if !bytes.Equal(a, b) {
		t.Fatal("two renders of equal charts differ")
	}
}

// elements parses doc as XML, failing on any error, and counts its
// elements by name and collects every path's d attribute.
func elements(t *testing.T, doc []byte) (count map[string]int, paths []string) {
	t.Helper()
	count = map[string]int{}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return count, paths
		}
		if err != nil {
			t.Fatalf("output is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			count[se.Name.Local]++
			for _, a := range se.Attr {
				if se.Name.Local == "path" && a.Name.Local == "d" {
					paths = append(paths, a.Value)
				}
			}
		}
	}
}

func TestWellFormed(t *testing.T) {
	c := sample()
	doc := render(t, c)
	count, _ := elements(t, doc)
	if count["path"]+count["polyline"] != len(c.Series) {
		t.Errorf("%d paths and %d polylines, want one per series (%d)", count["path"], count["polyline"], len(c.Series))
	}
	if count["svg"] != 1 || count["script"] != 0 {
		t.Errorf("%d svg and %d script elements, want 1 and 0", count["svg"], count["script"])
	}
	s := string(doc)
	if !strings.Contains(s, "bestfit &amp; &lt;spread&gt;") {
		t.Error("series name is not escaped")
	}
	for _, bad := range []string{"href", "@import", "url(http", "<script", "<image", "NaN", "Inf"} {
		if strings.Contains(s, bad) {
			t.Errorf("output contains %q", bad)
		}
	}
}

func TestNaNGapSplitsLine(t *testing.T) {
	nan := math.NaN()
	c := Chart{Series: []Series{{
		Name: "gappy",
		X:    []float64{0, 1, 2, 3, 4, 5, 6},
		Mid:  []float64{1, 2, nan, 3, 4, nan, 5},
		Lo:   []float64{0, 1, 1, 2, 3, 4, 4},
		Hi:   []float64{2, 3, 3, 4, 5, 6, 6},
	}}}
	_, paths := elements(t, render(t, c))
	if len(paths) != 1 {
		t.Fatalf("%d paths, want 1", len(paths))
	}
	d := paths[0]
	if n := strings.Count(d, "M"); n != 3 {
		t.Errorf("path %q has %d subpaths, want 3 (two gaps)", d, n)
	}
	if n := strings.Count(d, "L"); n != 2 {
		t.Errorf("path %q has %d segments, want 2", d, n)
	}
	if !strings.HasSuffix(d, "h0") {
		t.Errorf("path %q: lone last point is not drawn as a dot", d)
	}
}

func TestNaNBandSplitsPolygon(t *testing.T) {
	nan := math.NaN()
	c := Chart{Series: []Series{{
		X:   []float64{0, 1, 2, 3, 4, 5},
		Mid: []float64{1, 2, 3, 4, 5, 6},
		Lo:  []float64{0, 1, nan, 3, 4, 5},
		Hi:  []float64{2, 3, 4, 5, 6, 7},
	}}}
	count, _ := elements(t, render(t, c))
	if count["polygon"] != 2 {
		t.Errorf("%d band polygons, want 2", count["polygon"])
	}
}

func TestAllNaN(t *testing.T) {
	nan := math.NaN()
	all := []float64{nan, nan, nan}
	for _, c := range []Chart{
		{Series: []Series{{Name: "void", X: []float64{1, 2, 3}, Mid: all, Lo: all, Hi: all}}},
		{Series: []Series{{Name: "no x", X: all, Mid: all, Lo: all, Hi: all}}},
		{Series: []Series{{Name: "empty"}}},
		{Series: []Series{{Name: "void", X: []float64{1, 2, 3}, Mid: all, Lo: all, Hi: all}}, XMin: 0, XMax: 10},
		{Series: []Series{{Name: "flat", X: []float64{1, 2}, Mid: []float64{5, 5}, Lo: []float64{5, 5}, Hi: []float64{5, 5}}}},
	} {
		count, _ := elements(t, render(t, c))
		if count["text"] == 0 {
			t.Errorf("%s: no text drawn", c.Series[0].Name)
		}
	}
}

func TestErrors(t *testing.T) {
	ok := Series{Name: "a", X: []float64{1, 2}, Mid: []float64{1, 2}, Lo: []float64{0, 1}, Hi: []float64{2, 3}}
	short := ok
	short.Name, short.Lo = "b & c", []float64{0}
	tests := []struct {
		name  string
		chart Chart
		want  error
		text  string
	}{
		{"no series", Chart{Title: "T"}, errNoSeries, `chart "T": no series`},
		{"lengths differ", Chart{Series: []Series{ok, short}}, errLength, `chart: series 1 "b & c": length mismatch: lo has 1 values, x has 2`},
		{"negative width", Chart{Series: []Series{ok}, Width: -1}, errSize, "chart: size must be positive: width -1, height 0"},
		{"negative height", Chart{Series: []Series{ok}, Height: -440}, errSize, "chart: size must be positive: width 0, height -440"},
		{"tiny", Chart{Series: []Series{ok}, Width: 50, Height: 50}, errTooSmall, ""},
		{"reversed x", Chart{Series: []Series{ok}, XMin: 5, XMax: 1}, errRange, "chart: x axis: invalid axis range: min 5 > max 1"},
		{"NaN y", Chart{Series: []Series{ok}, YMin: math.NaN()}, errRange, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			err := Write(&b, tt.chart)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Write error = %v, want %v", err, tt.want)
			}
			if tt.text != "" && err.Error() != tt.text {
				t.Errorf("Write error = %q, want %q", err, tt.text)
			}
			if b.Len() != 0 {
				t.Errorf("Write wrote %d bytes before failing", b.Len())
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	err := Write(failWriter{}, sample())
	if err == nil || err.Error() != "write svg: disk full" {
		t.Errorf("Write error = %v, want write svg: disk full", err)
	}
}

func TestPaletteCycles(t *testing.T) {
	c := Chart{}
	for i := 0; i <= len(palette); i++ {
		c.Series = append(c.Series, Series{X: []float64{0, 1}, Mid: []float64{0, 1}, Lo: []float64{0, 1}, Hi: []float64{0, 1}})
	}
	s := string(render(t, c))
	if n := strings.Count(s, `stroke="`+palette[0]+`" stroke-width="2" stroke-linejoin`); n != 2 {
		t.Errorf("first colour strokes %d lines, want 2 (series 1 and %d)", n, len(palette)+1)
	}
	if !strings.Contains(s, ">series 9<") {
		t.Error("unnamed series 9 missing from the legend")
	}
}

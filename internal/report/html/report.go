package html

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/report/svg"
)

// Report is one HTML page. Empty sections are left out.
type Report struct {
	Title string
	// Summary is the answer first: a few sentences with the figures that
	// matter, in a box above everything else.
	Summary   []string
	Intro     []string // paragraphs under the title
	Waterfall *Waterfall
	Timelines []Timeline
	Costs     []CostItem
	// CostGroup names what the cost items' groups are ("policy" when
	// empty): the cost charts' caption says it.
	CostGroup     string
	Efficiency    []Efficiency
	Waits         []Waits
	Fragmentation []Line
	Curves        []Curve
	Tables        []Table
	Data          any // embedded as JSON; table cells point into it
}

// Timeline is GPUs over time for one model or pool: a series each for what
// is demanded, allocated, used (any of them may be left out). Committed,
// when positive, is drawn as the committed floor; Capacity, when positive,
// as the fleet's GPUs. YMax, when positive, fixes the top of the GPU axis
// (from 0), so that timelines set side by side share one scale (see
// ShareScale).
type Timeline struct {
	Name      string
	Hours     []float64
	Series    []Values
	Committed float64
	Capacity  float64
	YMax      float64
	// Areas shade what the GPUs are made of under the lines (committed
	// and used, committed and unused, on demand above the commitment).
	Areas []Area
}

// Area is a shaded region of a timeline, from Lo to Hi at each of its
// hours, in colour Fill ("" for the palette's next).
type Area struct {
	Name, Fill string
	Lo, Hi     []float64
}

// Waterfall is a chart of a starting cost, the changes to it and the
// total they come to (svg.WriteWaterfall), with a caption.
type Waterfall struct {
	ID, Title, YLabel string
	Caption           []string
	Steps             []svg.Step
}

// Efficiency is one alternative's total cost beside its cost per useful
// GPU-hour and the work it left undone, so that one that leaves work
// undone does not look cheapest by its total alone.
type Efficiency struct {
	Name             string
	TotalUSD         float64
	USDPerUsefulGPUH float64 // NaN or 0 when nothing useful was done
	UndoneGPUH       float64
}

// Values is one named series over a timeline's hours.
type Values struct {
	Name   string
	Values []float64
}

// CostItem is the cost of one pool on one capacity type. Group, when set
// (a policy, say), keeps groups apart: each group gets its own bars, in
// its own colour, instead of being added into one.
type CostItem struct {
	Group, Pool, Capacity string
	USD                   float64
}

// Waits are the waiting times (hours) of the jobs under one policy. They
// are drawn on a log time axis, waits under MinWaitHours at it.
type Waits struct {
	Policy string
	Hours  []float64
}

// Line is one named series of (x, y) points.
type Line struct {
	Name string
	X, Y []float64
}

// Curve is a plan's cost at each committed level and the level chosen.
type Curve struct {
	Name   string
	Levels []float64
	Cost   []float64
	Chosen int
}

// Table is a titled table. Numeric cells name the JSON path they show.
type Table struct {
	ID, Title string
	Columns   []string
	Rows      [][]Cell
	Notes     []string
}

// Cell is one table cell. When Path is set, Value is the number at that
// path of the report's data and Scale what it was multiplied by for Text
// (100 for a percentage).
type Cell struct {
	Text  string
	Path  string
	Value float64
	Scale float64
}

// Num makes a numeric cell showing v with the given decimals.
func Num(v float64, decimals int, path string) Cell {
	return Cell{Text: group(strconv.FormatFloat(v, 'f', decimals, 64)), Path: path, Value: v, Scale: 1}
}

// Pct makes a cell showing fraction v as a percentage.
func Pct(v float64, decimals int, path string) Cell {
	return Cell{Text: strconv.FormatFloat(100*v, 'f', decimals, 64) + "%", Path: path, Value: v, Scale: 100}
}

// Text makes a plain cell.
func Text(s string) Cell { return Cell{Text: s} }

// group puts thousands separators in a formatted number.
func group(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if hasFrac {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// section is one rendered part of the page.
type section struct {
	ID, Title string
	Text      []string
	Charts    []template.HTML
	Tables    []Table
}

// Write renders r.
func Write(w io.Writer, r Report) error {
	sections, err := render(r)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(r.Data, "", " ")
	if err != nil {
		return fmt.Errorf("html report: encode data: %w", err)
	}
	var b bytes.Buffer
	err = page.Execute(&b, struct {
		Title    string
		Summary  []string
		Intro    []string
		Sections []section
		Data     template.JS
	}{r.Title, r.Summary, r.Intro, sections, template.JS(data)})
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("html report: write: %w", err)
	}
	return nil
}

// render builds the sections in their fixed order.
func render(r Report) ([]section, error) {
	var out []section
	add := func(s section, err error) error {
		if err != nil {
			return err
		}
		if len(s.Charts) > 0 || len(s.Tables) > 0 {
			out = append(out, s)
		}
		return nil
	}
	steps := []func() (section, error){
		func() (section, error) { return waterfall(r.Waterfall) },
		func() (section, error) { return timelines(r.Timelines) },
		func() (section, error) { return costs(r.Costs, r.CostGroup) },
		func() (section, error) { return efficiency(r.Efficiency) },
		func() (section, error) { return waits(r.Waits) },
		func() (section, error) { return fragmentation(r.Fragmentation) },
		func() (section, error) { return curves(r.Curves) },
		func() (section, error) { return section{ID: "tables", Title: "Tables", Tables: r.Tables}, nil },
	}
	for _, step := range steps {
		if err := add(step()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"scale": func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) },
	"value": func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; color: #222; margin: 2em auto; max-width: 1100px; padding: 0 1em; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }
h3 { font-size: 1.05em; }
figure { margin: 1em 0; overflow-x: auto; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; }
th { background: #f4f4f4; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
p.note { color: #555; font-size: 0.9em; }
div.summary { background: #f4f8fb; border-left: 4px solid #0072B2; padding: 0.4em 1em; margin: 1em 0; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Summary}}<div class="summary" id="report-summary">
{{range .Summary}}<p>{{.}}</p>
{{end}}</div>
{{end}}{{range .Intro}}<p>{{.}}</p>
{{end}}{{range .Sections}}<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{range .Text}}<p>{{.}}</p>
{{end}}{{range .Charts}}<figure>{{.}}</figure>
{{end}}{{range .Tables}}<h3>{{.Title}}</h3>
<table id="{{.ID}}">
<thead><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}{{if .Path}}<td class="n" data-path="{{.Path}}" data-value="{{value .Value}}" data-scale="{{scale .Scale}}">{{.Text}}</td>{{else}}<td>{{.Text}}</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}{{end}}</section>
{{end}}<script type="application/json" id="data">
{{.Data}}
</script>
</body>
</html>
`))

package html

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/report/svg"
)

// inline renders a line chart as an <svg> element with the given id, ready
// to sit in the page: no XML declaration, and the chart's internal ids
// prefixed with id so that several charts can share the page.
func inline(c svg.Chart, id string) (template.HTML, error) {
	var b bytes.Buffer
	if err := svg.Write(&b, c); err != nil {
		return "", fmt.Errorf("chart %s: %w", id, err)
	}
	s := b.String()
	if i := strings.Index(s, "<svg "); i >= 0 {
		s = s[i:]
	}
	s = strings.Replace(s, "<svg ", `<svg id="`+id+`" `, 1)
	s = strings.ReplaceAll(s, `id="c0-`, `id="`+id+`-`)
	s = strings.ReplaceAll(s, `url(#c0-`, `url(#`+id+`-`)
	return template.HTML(s), nil // built by svg.Write, which escapes every text
}

// slug makes a name usable in an id.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// flat is a series without a band.
func flat(name string, x, y []float64) svg.Series {
	return svg.Series{Name: name, X: x, Mid: y, Lo: y, Hi: y}
}

func timelines(ts []Timeline) (section, error) {
	s := section{ID: "timeline", Title: "GPUs over time",
		Text: []string{"Hourly GPUs demanded, allocated and used; the dotted line is the committed floor."}}
	for _, t := range ts {
		if len(t.Series) == 0 {
			continue
		}
		c := svg.Chart{Title: t.Name, XLabel: "hour", YLabel: "GPUs", Width: 900, Height: 360}
		for _, v := range t.Series {
			c.Series = append(c.Series, flat(v.Name, t.Hours, v.Values))
		}
		if t.Committed > 0 {
			c.HLines = append(c.HLines, svg.Mark{At: t.Committed, Label: fmt.Sprintf("committed floor: %g GPUs", t.Committed)})
		}
		h, err := inline(c, "timeline-"+slug(t.Name))
		if err != nil {
			return s, err
		}
		s.Charts = append(s.Charts, h)
	}
	return s, nil
}

func waits(ws []Waits) (section, error) {
	s := section{ID: "waits", Title: "Waiting times",
		Text: []string{"Share of jobs that waited at most a given time, per policy (empirical CDF)."}}
	if len(ws) == 0 {
		return s, nil
	}
	c := svg.Chart{Title: "waiting time distribution", XLabel: "hours waited", YLabel: "share of jobs", YMin: 0, YMax: 1, Width: 900, Height: 380}
	for _, w := range ws {
		x, y := cdf(w.Hours)
		c.Series = append(c.Series, flat(w.Policy, x, y))
	}
	h, err := inline(c, "waits")
	s.Charts = append(s.Charts, h)
	return s, err
}

// cdf returns the steps of the empirical distribution of v.
func cdf(v []float64) (x, y []float64) {
	sorted := slices.Clone(v)
	slices.Sort(sorted)
	n := float64(len(sorted))
	for i, w := range sorted {
		if i+1 < len(sorted) && sorted[i+1] == w {
			continue
		}
		if len(x) > 0 {
			x, y = append(x, w), append(y, y[len(y)-1]) // horizontal step
		}
		x, y = append(x, w), append(y, float64(i+1)/n)
	}
	return x, y
}

func fragmentation(ls []Line) (section, error) {
	s := section{ID: "fragmentation", Title: "Fragmentation",
		Text: []string{"Share of free GPU capacity that no pending request can use, over time."}}
	if len(ls) == 0 {
		return s, nil
	}
	c := svg.Chart{Title: "fragmentation over time", XLabel: "hour", YLabel: "fragmented share", Width: 900, Height: 360}
	for _, l := range ls {
		c.Series = append(c.Series, flat(l.Name, l.X, l.Y))
	}
	h, err := inline(c, "fragmentation")
	s.Charts = append(s.Charts, h)
	return s, err
}

func curves(cs []Curve) (section, error) {
	s := section{ID: "plan", Title: "Cost by committed level",
		Text: []string{"Cost of the demand at each number of committed GPUs; the dashed line is the level chosen."}}
	for _, cv := range cs {
		c := svg.Chart{Title: cv.Name, XLabel: "committed GPUs", YLabel: "cost (USD)", Width: 900, Height: 360,
			Series: []svg.Series{flat("cost", cv.Levels, cv.Cost)},
			Marks:  []svg.Mark{{At: float64(cv.Chosen), Label: fmt.Sprintf("best: %d", cv.Chosen)}}}
		h, err := inline(c, "curve-"+slug(cv.Name))
		if err != nil {
			return s, err
		}
		s.Charts = append(s.Charts, h)
	}
	return s, nil
}

func costs(items []CostItem) (section, error) {
	s := section{ID: "cost", Title: "Cost by pool and capacity type"}
	if len(items) == 0 {
		return s, nil
	}
	byPool, byCap := sumBy(items, func(c CostItem) string { return c.Pool }), sumBy(items, func(c CostItem) string { return c.Capacity })
	s.Charts = append(s.Charts, bars("cost-by-pool", "cost by pool (USD)", byPool), bars("cost-by-capacity", "cost by capacity type (USD)", byCap))
	return s, nil
}

// sumBy totals items by key, in order of first appearance.
func sumBy(items []CostItem, key func(CostItem) string) []bar {
	var out []bar
	for _, it := range items {
		k := key(it)
		i := slices.IndexFunc(out, func(b bar) bool { return b.label == k })
		if i < 0 {
			out = append(out, bar{label: k})
			i = len(out) - 1
		}
		out[i].value += it.USD
	}
	return out
}

// finiteOr returns v, or alt when v is not finite.
func finiteOr(v, alt float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return alt
	}
	return v
}

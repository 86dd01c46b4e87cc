package html

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/report/svg"
)

// inline renders a line chart as an <svg> element with the given id, ready
// to sit in the page: no XML declaration, and the chart's internal ids
// prefixed with id so that several charts can share the page.
func inline(c svg.Chart, id string) (template.HTML, error) {
	return inlineWith(func(b *bytes.Buffer) error { return svg.Write(b, c) }, id)
}

// inlineWith is inline for any chart that write renders with the svg
// package's ids (prefixed c0).
func inlineWith(write func(*bytes.Buffer) error, id string) (template.HTML, error) {
	var b bytes.Buffer
	if err := write(&b); err != nil {
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
		Text: []string{"Hourly GPUs demanded, allocated and used, on a GPU axis from zero; the dotted lines are the committed floor and, where given, the fleet's capacity."}}
	if slices.ContainsFunc(ts, func(t Timeline) bool { return t.YMax > 0 }) {
		s.Text[0] += " The charts share one GPU scale, to compare them at a glance."
	}
	if slices.ContainsFunc(ts, func(t Timeline) bool { return len(t.Areas) > 0 }) {
		s.Text = append(s.Text, "Shaded under the demand: committed GPUs in use (blue), committed GPUs paid for and unused (grey), and GPUs on demand above the commitment (orange).")
	}
	if off := offTheTop(ts); off != "" {
		s.Text = append(s.Text, off)
	}
	for _, t := range ts {
		if len(t.Series) == 0 {
			continue
		}
		h, err := inline(timelineChart(t), "timeline-"+slug(t.Name))
		if err != nil {
			return s, err
		}
		s.Charts = append(s.Charts, h)
	}
	return s, nil
}

// timelineChart draws a timeline on a GPU axis from zero: a count drawn
// from anywhere else exaggerates how much it moves.
func timelineChart(t Timeline) svg.Chart {
	c := svg.Chart{Title: t.Name, XLabel: "hour", YLabel: "GPUs", Width: 900, Height: 360}
	c.YMin, c.YMax = 0, t.YMax
	if t.YMax <= 0 {
		_, highest := peak(t)
		c.YMax = max(1, 1.05*max(highest, finiteOr(t.Committed, 0)))
	}
	for _, v := range t.Series {
		c.Series = append(c.Series, flat(v.Name, t.Hours, v.Values))
	}
	for _, a := range t.Areas {
		c.Areas = append(c.Areas, svg.Area{Name: a.Name, Fill: a.Fill, X: t.Hours, Lo: a.Lo, Hi: a.Hi})
	}
	if t.Capacity > 0 { // first: the higher line keeps its label above it
		c.HLines = append(c.HLines, svg.Mark{At: t.Capacity, Label: fmt.Sprintf("fleet capacity: %g GPUs", t.Capacity)})
	}
	if t.Committed > 0 {
		c.HLines = append(c.HLines, svg.Mark{At: t.Committed, Label: fmt.Sprintf("committed floor: %g GPUs", t.Committed)})
	}
	return c
}

// ShareScale gives timelines one GPU scale from 0: a little above the
// highest value, floor or capacity of any of them, but at most twice the
// largest capacity given, so that a queue's demand far beyond the fleet
// does not flatten what the fleet did. What runs off the top is said
// beside the charts.
func ShareScale(ts []Timeline) {
	top, capacity := 0.0, 0.0
	for _, t := range ts {
		capacity = max(capacity, finiteOr(t.Capacity, 0))
		_, highest := peak(t)
		top = max(top, finiteOr(t.Committed, 0), highest)
	}
	if capacity > 0 {
		top = min(top, 2*capacity)
	}
	for i := range ts {
		ts[i].YMax = max(top*1.05, 1)
	}
}

// peak is a timeline's highest value, its capacity included, and the
// series it is in ("" for the capacity).
func peak(t Timeline) (series string, value float64) {
	value = finiteOr(t.Capacity, 0)
	for _, v := range t.Series {
		for _, x := range v.Values {
			if finiteOr(x, 0) > value {
				series, value = v.Name, x
			}
		}
	}
	return series, value
}

// offTheTop says which timelines have values above their fixed scale, in
// one sentence ("" when none has).
func offTheTop(ts []Timeline) string {
	var parts []string
	for _, t := range ts {
		if series, value := peak(t); t.YMax > 0 && value > t.YMax {
			parts = append(parts, fmt.Sprintf("%s's %s peaks at %s GPUs", t.Name, series, group(strconv.FormatFloat(value, 'f', 0, 64))))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Above the top of the scale: " + strings.Join(parts, "; ") + "."
}

// MinWaitHours is where the wait CDF's log time axis starts: one minute.
// Shorter waits, zero included, are drawn there.
const MinWaitHours = 1.0 / 60

func waits(ws []Waits) (section, error) {
	s := section{ID: "waits", Title: "Waiting times",
		Text: []string{"Share of jobs that waited at most a given time, per policy (empirical CDF), on a log time axis: each step right is ten times longer. Waits under a minute, none included, are drawn at one minute."}}
	if len(ws) == 0 {
		return s, nil
	}
	top := 1.0 // at least an hour, so that waits all under a minute still draw a line
	for _, w := range ws {
		for _, h := range w.Hours {
			top = max(top, finiteOr(h, 0))
		}
	}
	top *= 1.25 // room to see the last step
	c := svg.Chart{Title: "waiting time distribution", XLabel: "hours waited (log scale)", YLabel: "share of jobs", YMin: 0, YMax: 1,
		XLog: true, XMin: MinWaitHours, XMax: top, Width: 900, Height: 380}
	for _, w := range ws {
		x, y := cdf(atLeast(w.Hours, MinWaitHours))
		if n := len(x); n > 0 && x[n-1] < top { // every job has waited by then: run on to the axis's end
			x, y = append(x, top), append(y, y[n-1])
		}
		c.Series = append(c.Series, flat(w.Policy, x, y))
	}
	h, err := inline(c, "waits")
	s.Charts = append(s.Charts, h)
	return s, err
}

// atLeast is v with every value below lo raised to lo.
func atLeast(v []float64, lo float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = max(x, lo)
	}
	return out
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
		Text: []string{"Free GPUs on nodes that are partly used, at each hour, per policy: capacity scattered in pieces that a request for whole nodes or a large gang cannot use."}}
	if len(ls) == 0 {
		return s, nil
	}
	c := svg.Chart{Title: "fragmented GPUs over time", XLabel: "hour", YLabel: "free GPUs on partly used nodes", Width: 900, Height: 360}
	top := 0.0
	for _, l := range ls {
		c.Series = append(c.Series, flat(l.Name, l.X, l.Y))
		for _, y := range l.Y {
			top = max(top, finiteOr(y, 0))
		}
	}
	c.YMin, c.YMax = 0, max(top*1.05, 1) // a count: from 0
	h, err := inline(c, "fragmentation")
	s.Charts = append(s.Charts, h)
	return s, err
}

func curves(cs []Curve) (section, error) {
	s := section{ID: "plan", Title: "Cost by committed level",
		Text: []string{"Cost of the demand at each number of committed GPUs, on a cost axis from zero; the dashed line is the level chosen."}}
	for _, cv := range cs {
		c := svg.Chart{Title: cv.Name, XLabel: "committed GPUs", YLabel: "cost (USD)", Width: 900, Height: 360,
			Series: []svg.Series{flat("cost", cv.Levels, cv.Cost)}, YMin: 0, YMax: max(1, 1.05*highest(cv.Cost)),
			Marks: []svg.Mark{{At: float64(cv.Chosen), Label: fmt.Sprintf("best: %d", cv.Chosen)}}}
		h, err := inline(c, "curve-"+slug(cv.Name))
		if err != nil {
			return s, err
		}
		s.Charts = append(s.Charts, h)
	}
	return s, nil
}

// costs draws cost by pool and by capacity type; with one pool only, the
// chart by pool would say nothing the other does not, and is left out.
// group names what the items' groups are ("policy" when empty).
func costs(items []CostItem, group string) (section, error) {
	s := section{ID: "cost", Title: "Cost by pool and capacity type"}
	if len(items) == 0 {
		return s, nil
	}
	if group == "" {
		group = "policy"
	}
	byPool := sumBy(items, func(c CostItem) string { return c.Pool })
	byCap := sumBy(items, func(c CostItem) string { return c.Capacity })
	onePool := !slices.ContainsFunc(items, func(c CostItem) bool { return c.Pool != items[0].Pool })
	if onePool {
		s.Title = "Cost by capacity type"
	}
	if grouped(items) {
		what := "pool or capacity type"
		if onePool {
			what = "capacity type"
		}
		s.Text = []string{fmt.Sprintf("One bar per %s and %s, coloured by %s: each %s's cost, not their sum.", group, what, group, group)}
	}
	if !onePool {
		s.Charts = append(s.Charts, bars("cost-by-pool", "cost by pool (USD)", byPool))
	}
	s.Charts = append(s.Charts, bars("cost-by-capacity", "cost by capacity type (USD)", byCap))
	return s, nil
}

// waterfall draws w, if any.
func waterfall(w *Waterfall) (section, error) {
	if w == nil {
		return section{}, nil
	}
	s := section{ID: w.ID, Title: w.Title, Text: w.Caption}
	h, err := inlineWith(func(b *bytes.Buffer) error {
		return svg.WriteWaterfall(b, svg.Waterfall{Title: w.Title, YLabel: w.YLabel, Steps: w.Steps, Width: 900, Height: 400})
	}, w.ID+"-chart")
	s.Charts = append(s.Charts, h)
	return s, err
}

// efficiency sets each alternative's total beside its cost per useful
// GPU-hour, each bar's label saying the work it left undone.
func efficiency(es []Efficiency) (section, error) {
	s := section{ID: "efficiency", Title: "Cost per useful GPU-hour",
		Text: []string{"Totals compare equal work only: an alternative that leaves work undone pays for less. Beside each total, its cost per GPU-hour of work done and kept; labels name the GPU-hours of work left undone."}}
	if len(es) == 0 {
		return s, nil
	}
	var totals, per []bar
	for i, e := range es {
		label := e.Name
		if e.UndoneGPUH >= 0.5 {
			label += fmt.Sprintf(" (%s GPU-h undone)", group(strconv.FormatFloat(e.UndoneGPUH, 'f', 0, 64)))
		}
		totals = append(totals, bar{label: label, value: e.TotalUSD, colour: i})
		per = append(per, bar{label: label, value: e.USDPerUsefulGPUH, colour: i, decimals: 2})
	}
	s.Charts = append(s.Charts, bars("efficiency-total", "total cost (USD)", totals), bars("efficiency-per-useful", "USD per useful GPU-hour", per))
	return s, nil
}

// highest is the largest finite value of v (0 when none is).
func highest(v []float64) float64 {
	top := 0.0
	for _, x := range v {
		top = max(top, finiteOr(x, 0))
	}
	return top
}

// grouped tells whether any item names a group.
func grouped(items []CostItem) bool {
	return slices.ContainsFunc(items, func(c CostItem) bool { return c.Group != "" })
}

// sumBy totals items by group and key, in order of first appearance; a
// bar's label names its group, and its colour is its group's.
func sumBy(items []CostItem, key func(CostItem) string) []bar {
	var out []bar
	var groups []string
	for _, it := range items {
		k := key(it)
		if it.Group != "" {
			k = it.Group + " / " + k
		}
		i := slices.IndexFunc(out, func(b bar) bool { return b.label == k })
		if i < 0 {
			g := slices.Index(groups, it.Group)
			if g < 0 {
				groups, g = append(groups, it.Group), len(groups)
			}
			out = append(out, bar{label: k, colour: g})
			i = len(out) - 1
		}
		out[i].value += it.USD
	}
	if len(groups) == 1 { // one group or none: a colour per bar
		for i := range out {
			out[i].colour = i
		}
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

// Package svg draws line charts with uncertainty bands as self-contained SVG
// documents: a median line per series over a translucent band from its low
// to its high values, with nice 1-2-5 ticks, light grid lines, a title,
// axis labels, a legend and optional dashed (vertical) and dotted
// (horizontal) reference lines. Series take their colours from the
// colour-blind-safe Okabe-Ito palette, in a fixed order.
//
// The output has no scripts, no external fonts (text uses the viewer's
// generic sans-serif) and no links, so it opens offline in any browser.
// It is deterministic: equal charts give byte-identical documents, so
// rendered charts can be kept under version control and diffed.
//
// The package imports only the standard library and performs no I/O beyond
// the io.Writer it is given. Start with Chart and Write in svg.go; WriteGrid
// (grid.go) puts several charts in one document. layout.go places the
// parts of a chart, draw.go draws them and ticks.go picks the ticks;
// logx.go draws x on a log scale (Chart.XLog). Chart.Areas shades filled
// regions under the lines. waterfall.go draws a waterfall (WriteWaterfall):
// a starting total, the steps from it, each starting where the previous
// ended (WaterfallBars), and the totals they come to.
package svg

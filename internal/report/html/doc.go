// Package html writes corral's cost and scheduling reports as one
// self-contained HTML file: inline CSS, inline SVG charts, no scripts that
// run, no fonts or links to fetch, so the file opens offline and can be
// mailed or committed.
//
// A Report (report.go) opens with a summary (the answer first) and is a
// list of optional sections: a waterfall of savings; GPUs demanded,
// allocated and used over time with the committed floor as a reference line;
// cost by pool and by capacity type (bar charts, bar.go); each
// alternative's total beside its cost per useful GPU-hour, with the work
// it left undone; wait-time
// distributions per policy (CDFs); fragmentation over time; a plan's cost
// by committed level; and tables. Line charts come from internal/report/svg;
// charts.go adapts them and gives every chart an id. The report's data is
// embedded as JSON in <script type="application/json" id="data">, and every
// number in a table names the JSON path it shows (data-path), so tools and
// tests can check the page against its data.
//
// plan.go builds the report of corral plan. Output is deterministic: equal
// reports give byte-identical files.
package html

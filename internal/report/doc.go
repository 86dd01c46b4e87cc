// Package report renders results for people and machines: terminal tables
// and JSON here, SVG charts in the svg subpackage.
//
// It formats what other packages computed and decides nothing. Start with
// fgd.go, the packing benchmark's table; curves.go draws its curves.
package report

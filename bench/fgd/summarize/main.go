// Command summarize turns the JSON of `corral bench fgd` into the markdown
// tables of bench/fgd/RESULTS.md:
//
//	go run ./bench/fgd/summarize bench/fgd/results.json
//
// It prints, per trace, every policy's mean unallocated GPU % at x = 100
// beside the authors' published number, then corral's and corral-online's
// margin over fgd set against the seed spreads and the paired per-seed
// differences.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/corral-sched/corral/internal/packbench"
)

type document struct {
	Runs   []packbench.Summary `json:"runs"`
	Bounds []struct {
		Trace  string  `json:"trace"`
		LP     float64 `json:"lp_min_unallocated_pct_at_100"`
		Packed float64 `json:"offline_packed_unallocated_pct_at_100"`
	} `json:"bounds"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: summarize RESULTS.json")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "summarize:", err)
		os.Exit(1)
	}
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		fmt.Fprintln(os.Stderr, "summarize:", err)
		os.Exit(1)
	}
	cells := packbench.Aggregate(doc.Runs)
	policyTable(os.Stdout, cells, doc)
	fmt.Println()
	marginTable(os.Stdout, doc.Runs, cells)
	fmt.Println()
	speedTable(os.Stdout, doc.Runs, cells)
}

// speedTable prints each policy's median seconds per run on each trace as
// a multiple of fgd's, and the mean of those multiples over the traces
// (runs without times, from --timing=false, print nothing).
func speedTable(w io.Writer, runs []packbench.Summary, cells []packbench.Cell) {
	median := func(trace, policy string) float64 {
		var s []float64
		for _, r := range runs {
			if r.Trace == trace && r.Policy == policy && r.Seconds > 0 {
				s = append(s, r.Seconds)
			}
		}
		if len(s) == 0 {
			return 0
		}
		sort.Float64s(s)
		if len(s)%2 == 1 {
			return s[len(s)/2]
		}
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	var others []string
	for _, p := range policies(cells) {
		if p != "fgd" {
			others = append(others, p)
		}
	}
	sum, n := make([]float64, len(others)), 0
	var rows []string
	for _, tr := range traces(cells) {
		base := median(tr, "fgd")
		if base == 0 {
			continue
		}
		row := fmt.Sprintf("| %s | %.2f |", strings.TrimPrefix(tr, "openb_pod_list_"), base)
		for i, p := range others {
			ratio := median(tr, p) / base
			sum[i] += ratio
			row += fmt.Sprintf(" %.2f (%.1fx) |", median(tr, p), ratio)
		}
		rows = append(rows, row)
		n++
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "| trace | fgd s/run | %s |\n|---|---:|%s\n", strings.Join(others, " | "), strings.Repeat("---:|", len(others)))
	for _, r := range rows {
		fmt.Fprintln(w, r)
	}
	mean := "| mean of the traces' multiples | |"
	for i := range others {
		mean += fmt.Sprintf(" %.1fx |", sum[i]/float64(n))
	}
	fmt.Fprintln(w, mean)
}

func traces(cells []packbench.Cell) []string {
	var out []string
	for _, c := range cells {
		if len(out) == 0 || out[len(out)-1] != c.Trace {
			out = append(out, c.Trace)
		}
	}
	return out
}

func policies(cells []packbench.Cell) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cells {
		if !seen[c.Policy] {
			seen[c.Policy] = true
			out = append(out, c.Policy)
		}
	}
	return out
}

func cell(cells []packbench.Cell, trace, policy string) (packbench.Cell, bool) {
	for _, c := range cells {
		if c.Trace == trace && c.Policy == policy {
			return c, true
		}
	}
	return packbench.Cell{}, false
}

// policyTable: one row per trace, one column per policy (ours / paper).
func policyTable(w io.Writer, cells []packbench.Cell, doc document) {
	ps := policies(cells)
	fmt.Fprintf(w, "| trace | %s | LP bound | offline packing |\n", strings.Join(ps, " | "))
	fmt.Fprintf(w, "|---|%s---|---|\n", strings.Repeat("---|", len(ps)))
	for _, t := range traces(cells) {
		row := []string{strings.TrimPrefix(t, "openb_pod_list_")}
		for _, p := range ps {
			c, _ := cell(cells, t, p)
			v := fmt.Sprintf("%.2f", c.At100.Mean)
			if pub, ok := packbench.PublishedAt100(t, p); ok {
				v += fmt.Sprintf(" (%.2f)", pub.Mean)
			}
			row = append(row, v)
		}
		lp, packed := "-", "-"
		for _, b := range doc.Bounds {
			if b.Trace == t {
				lp, packed = fmt.Sprintf("%.2f", b.LP), fmt.Sprintf("%.2f", b.Packed)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", strings.Join(row, " | "), lp, packed)
	}
}

// marginTable sets corral's gain over fgd against the seed spreads.
func marginTable(w io.Writer, runs []packbench.Summary, cells []packbench.Cell) {
	fmt.Fprintln(w, "| trace | fgd mean [min-max] | corral | margin | paired wins | corral-online | margin | paired wins |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, t := range traces(cells) {
		f, ok := cell(cells, t, "fgd")
		if !ok {
			continue
		}
		row := fmt.Sprintf("| %s | %.2f [%.2f-%.2f] |", strings.TrimPrefix(t, "openb_pod_list_"), f.At100.Mean, f.At100.Min, f.At100.Max)
		for _, p := range []string{"corral", "corral-online"} {
			c, ok := cell(cells, t, p)
			if !ok {
				row += " - | - | - |"
				continue
			}
			wins, n := pairedWins(runs, t, p)
			row += fmt.Sprintf(" %.2f [%.2f-%.2f] | %+.2f | %d/%d |", c.At100.Mean, c.At100.Min, c.At100.Max, c.At100.Mean-f.At100.Mean, wins, n)
		}
		fmt.Fprintln(w, row)
	}
}

// pairedWins counts seeds on which policy left fewer GPUs than fgd.
func pairedWins(runs []packbench.Summary, trace, policy string) (int, int) {
	fgd := map[int64]float64{}
	for _, r := range runs {
		if r.Trace == trace && r.Policy == "fgd" {
			fgd[r.Seed] = r.UnallocatedAt100
		}
	}
	var seeds []int64
	mine := map[int64]float64{}
	for _, r := range runs {
		if r.Trace == trace && r.Policy == policy {
			if _, ok := fgd[r.Seed]; ok {
				mine[r.Seed] = r.UnallocatedAt100
				seeds = append(seeds, r.Seed)
			}
		}
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	wins := 0
	for _, s := range seeds {
		if mine[s] < fgd[s] {
			wins++
		}
	}
	return wins, len(seeds)
}

package main

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/corral-sched/corral/internal/cost/plan"
	"github.com/corral-sched/corral/internal/sim"
)

// writeDemandCSVs writes, for each policy, the cards occupied at every hour
// boundary per GPU model: the demand a commitment is sized against. The
// same workload packed by different policies gives different demand.
func writeDemandCSVs(dir string, results []*sim.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demand directory: %w", err)
	}
	for _, r := range results {
		path := filepath.Join(dir, r.Policy+".csv")
		if err := writeDemandCSV(path, r.Hours); err != nil {
			return err
		}
	}
	return nil
}

func writeDemandCSV(path string, hours []sim.Hour) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("demand CSV: %w", err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "hour,gpu_model,gpus")
	d := cardDemand(hours)
	for i, h := range hours {
		for _, s := range d.Series {
			fmt.Fprintf(w, "%d,%s,%d\n", h.Hour, s.Model, int(s.GPUs[i]))
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("demand CSV %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("demand CSV %s: %w", path, err)
	}
	return nil
}

// cardDemand is the cards occupied at every hour boundary per GPU model:
// the demand a commitment is sized against, series in model order.
func cardDemand(hours []sim.Hour) *plan.Demand {
	byModel := map[string][]float64{}
	for i, h := range hours {
		for _, g := range h.Groups {
			s := byModel[g.GPUModel]
			if s == nil {
				s = make([]float64, len(hours))
				byModel[g.GPUModel] = s
			}
			s[i] += float64(g.Occupied)
		}
	}
	d := &plan.Demand{Hours: len(hours)}
	for _, m := range slices.Sorted(maps.Keys(byModel)) {
		d.Series = append(d.Series, plan.Series{Model: m, GPUs: byModel[m]})
	}
	return d
}

package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"

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
	for _, h := range hours {
		byModel := map[string]int{}
		for _, g := range h.Groups {
			byModel[g.GPUModel] += g.Occupied
		}
		models := make([]string, 0, len(byModel))
		for m := range byModel {
			models = append(models, m)
		}
		sort.Strings(models)
		for _, m := range models {
			fmt.Fprintf(w, "%d,%s,%d\n", h.Hour, m, byModel[m])
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

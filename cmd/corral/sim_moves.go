package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/moves"
	"github.com/corral-sched/corral/internal/workload"
)

// runMoves replays the workload once per move (internal/moves) and prints
// the table; --json and --html write the report.
func runMoves(o simOptions, stdout, stderr io.Writer) error {
	now, err := dayFlag("--now", o.now)
	if err != nil {
		return err
	}
	cat, err := planCatalogOn(o.pricesPath, now)
	if err != nil {
		return err
	}
	w, label, err := movesInput(o)
	if err != nil {
		return err
	}
	terms, err := floorTerms(o.floorTerms)
	if err != nil {
		return err
	}
	progress := func(string) {}
	if isTerminal(stderr) {
		progress = func(m string) { fmt.Fprintf(stderr, "  replaying %s\n", m) }
	}
	rep, err := moves.Run(moves.Options{Workload: w, Label: label, Nodes: o.nodes, Catalog: cat, Terms: terms,
		Seed: uint64(o.seedN), SpotOutage: o.spotOutage, ProvisionDelay: o.provisionDelay, ScaleDownAfter: o.scaleDownAfter,
		Now: now, Progress: progress})
	if err != nil {
		return err
	}
	rep.Write(stdout)
	if o.htmlPath != "" {
		if err := writeHTMLFile(o.htmlPath, rep.HTML()); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nreport written to %s\n", o.htmlPath)
	}
	if o.jsonPath == "" {
		return nil
	}
	data, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", o.jsonPath, err)
	}
	if err := os.WriteFile(o.jsonPath, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", o.jsonPath, err)
	}
	return nil
}

// movesInput is the workload --moves replays: the generated four tenants
// (every task's demand as the shapes give it; the moves decide how it is
// served), or a jobs file or sacct history, whose class column (training,
// fine-tuning, inference, notebook) says which moves apply to a job.
func movesInput(o simOptions) (workload.Workload, string, error) {
	switch o.workloadKind {
	case "generated":
		return moves.Generated(o.nodes, o.days, o.load, uint64(o.seedN))
	case "jobs", "sacct":
		_, w, label, err := recordedInput(o)
		return w, fmt.Sprintf("%s, %d jobs, sized for %d GPUs", label, len(w.Arrivals), o.nodes*8), err
	}
	return workload.Workload{}, "", fmt.Errorf("--moves replays the generated workload, a jobs file or an sacct history, not --workload %s", o.workloadKind)
}

// floorTerms reads --floor-terms: a comma-separated list of block, 1y, 3y.
func floorTerms(list string) ([]price.Capacity, error) {
	var out []price.Capacity
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		if t != "block" && t != "1y" && t != "3y" {
			return nil, usageErrorf("--floor-terms %q: want a comma-separated list of block, 1y and 3y", list)
		}
		out = append(out, price.Capacity("reserved-"+t))
	}
	return out, nil
}

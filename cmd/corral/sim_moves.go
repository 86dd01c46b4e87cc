package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
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
	model, fromFleet, err := movesModel(&o)
	if err != nil {
		return err
	}
	if _, err := moves.Offer(cat, o.provider, model, o.offer); err != nil {
		return movesOfferError(err)
	}
	w, label, err := movesInput(o)
	if err != nil {
		return err
	}
	if fromFleet {
		label += fmt.Sprintf("; %s from --fleet %s, %d nodes of 8 GPUs", model, o.fleetPath, o.nodes)
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
		GPUModel: model, Family: o.offer, Provider: o.provider,
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
		jobs, label, err := recordedJobs(o)
		if err != nil {
			return workload.Workload{}, "", err
		}
		w := jobs.Workload
		return w, fmt.Sprintf("%s, %d jobs, sized for %d GPUs", label, len(w.Arrivals), o.nodes*8), nil
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

// movesModel is the GPU model --moves prices: --gpu-model, or the one
// model of the --fleet file's GPU nodes (whose GPUs, in 8-GPU nodes, size
// the pools unless --nodes is given); fromFleet says it came from the
// fleet. A fleet of several models is refused, naming them: the moves
// price one model at a time.
func movesModel(o *simOptions) (model string, fromFleet bool, err error) {
	if o.fleetPath == "" {
		if o.gpuModel == "" {
			return fleet.DefaultGPUModel, false, nil
		}
		return o.gpuModel, false, nil
	}
	f, err := fleet.Load(o.fleetPath)
	if err != nil {
		return "", false, err
	}
	var models []string
	for _, n := range f.Nodes {
		if n.GPUs > 0 && !slices.Contains(models, n.GPUModel) {
			models = append(models, n.GPUModel)
		}
	}
	slices.Sort(models)
	switch {
	case len(models) == 0:
		return "", false, usageErrorf("--fleet %s has no GPU nodes for --moves to price", o.fleetPath)
	case len(models) > 1:
		return "", false, usageErrorf("--moves prices one GPU model at a time; --fleet %s has %s: give a fleet file of one model", o.fleetPath, strings.Join(models, ", "))
	case o.gpuModel != "" && !sameModel(o.gpuModel, models[0]):
		return "", false, usageErrorf("--gpu-model %s, but the GPUs of --fleet %s are %s", o.gpuModel, o.fleetPath, models[0])
	}
	if !o.nodesSet {
		o.nodes = max(1, (f.GPUs()+fleet.DefaultGPUsPerNode-1)/fleet.DefaultGPUsPerNode)
	}
	return models[0], true, nil
}

// sameModel tells whether two names (catalog names or aliases) are one
// GPU model.
func sameModel(a, b string) bool {
	ma, errA := gpu.Lookup(a)
	mb, errB := gpu.Lookup(b)
	return errA == nil && errB == nil && ma == mb
}

// movesOfferError makes a model, offer or provider the catalog has no
// offer for a usage error: the flags asked for something it cannot price.
func movesOfferError(err error) error {
	if errors.Is(err, price.ErrUnknown) {
		return usageErrorf("--gpu-model, --offer, --provider: %v", err)
	}
	return err
}

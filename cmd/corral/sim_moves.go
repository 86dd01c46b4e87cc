package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/moves"
	"github.com/corral-sched/corral/internal/workload"
)

// runMoves replays the generated workload once per move (internal/moves)
// and prints the table; --json writes the report.
func runMoves(o simOptions, stdout, stderr io.Writer) error {
	if o.workloadKind != "generated" {
		return fmt.Errorf("--moves replays the generated four-tenant workload; --workload %s is not supported with it yet", o.workloadKind)
	}
	now, err := dayFlag("--now", o.now)
	if err != nil {
		return err
	}
	cat, err := planCatalog(o.pricesPath)
	if err != nil {
		return err
	}
	horizon := time.Duration(o.days * 24 * float64(time.Hour))
	spec, err := workload.DefaultFourTenants(horizon).ForLoad(o.nodes*8, o.load)
	if err != nil {
		return err
	}
	w, err := workload.Generate(spec, uint64(o.seedN))
	if err != nil {
		return err
	}
	label := fmt.Sprintf("generated four-tenant workload, %d jobs, load %.2f of %d GPUs, %.0f days, seed %d", len(w.Arrivals), o.load, o.nodes*8, o.days, o.seedN)
	term := price.Capacity("reserved-" + o.reservedTerm)
	progress := func(string) {}
	if isTerminal(stderr) {
		progress = func(m string) { fmt.Fprintf(stderr, "  replaying %s\n", m) }
	}
	rep, err := moves.Run(moves.Options{Workload: w, Label: label, Nodes: o.nodes, Catalog: cat, Term: term,
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

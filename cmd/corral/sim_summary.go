package main

import (
	"fmt"
	"io"

	"github.com/corral-sched/corral/internal/sim"
)

// writeDefrag says what defragmentation did under each policy (only
// corral moves jobs).
func writeDefrag(w io.Writer, results []*sim.Result) {
	fmt.Fprintln(w, "\ndefragmentation: small checkpointing jobs moved for gangs kept waiting by scattered free GPUs")
	for _, r := range results {
		s := r.Summary
		fmt.Fprintf(w, "  %-15s %6d jobs moved, %8.0f GPU-h gained net of work lost\n", r.Policy, s.Moves, s.DefragGainGPUH)
	}
}

// writeEstimates says how good the start estimates given to the jobs first
// in line were.
func writeEstimates(w io.Writer, results []*sim.Result) {
	fmt.Fprintln(w, "\nstart estimates given to jobs first in line (running jobs assumed to end at their estimates):")
	for _, r := range results {
		s := r.Summary
		if s.Estimates == 0 {
			fmt.Fprintf(w, "  %-15s none (no job waited behind a reservation)\n", r.Policy)
			continue
		}
		fmt.Fprintf(w, "  %-15s %6d jobs, mean |start - estimate| %6.2fh, %3.0f%% started no later than estimated\n",
			r.Policy, s.Estimates, s.EstimateErrH, 100*s.EstimateEarly)
	}
}

// maxRefusedListed bounds the refused jobs listed one by one.
const maxRefusedListed = 20

// writeRefused lists the jobs refused at arrival: their tenants' quota can
// never admit them. Quotas come from the workload, so every policy
// refuses the same jobs; they are listed once.
func writeRefused(w io.Writer, results []*sim.Result) {
	if len(results) == 0 || len(results[0].Refused) == 0 {
		return
	}
	s := results[0].Summary
	fmt.Fprintf(w, "\n%s: %d jobs (%.0f GPU-h of work) refused at arrival under every policy, and left out of every figure:\n",
		sim.RefusedLabel(results[0].Refused), s.Refused, s.RefusedGPUH)
	for i, j := range results[0].Refused {
		if i == maxRefusedListed {
			fmt.Fprintf(w, "  ... and %d more (--json lists them all)\n", len(results[0].Refused)-i)
			break
		}
		fmt.Fprintf(w, "  %-16s tenant %-10s %8.2f GPUs, arrived %7.2fh: %s\n", j.Name, j.Tenant, j.GPUs, j.Arrive.Hours(), j.Reason)
	}
}

package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/corral-sched/corral/internal/cost/tco"
	"github.com/corral-sched/corral/internal/sim"
)

// hoursPerMonth scales a replay's GPU-hours to a month.
const hoursPerMonth = 730

// simTCO compares the platforms of the TCO profiles on the replay: each
// platform's GPU-hours and waits come from the policy that models its
// scheduling, scaled to a month of the replay's pace; the managed
// service, which gives every job its own whole GPUs for its run, from the
// corral replay's job records. Fixed costs come from the profiles (path,
// or the built-in assumptions).
func simTCO(path string, results []*sim.Result, costs map[string]*simCost) ([]tco.Row, error) {
	profiles, err := loadProfiles(path)
	if err != nil {
		return nil, err
	}
	byPolicy := map[string]*sim.Result{}
	for _, r := range results {
		byPolicy[r.Policy] = r
	}
	inputs := map[string]tco.Input{}
	for _, p := range profiles {
		if p.Policy == "" {
			ref := byPolicy["corral"]
			if ref == nil {
				ref = results[0]
			}
			inputs[p.Name] = managedInput(ref, costs[ref.Policy])
			continue
		}
		r := byPolicy[p.Policy]
		if r == nil {
			return nil, fmt.Errorf("platform %q is modelled by policy %q: add it to --policies", p.Name, p.Policy)
		}
		bill := costs[r.Policy].Bill.Total
		month := hoursPerMonth / math.Max(r.Summary.MakespanH, 1)
		in := tco.Input{GPUHoursBought: bill.BoughtGPUH * month, MeanWaitHours: r.Summary.MeanWaitH, P99WaitHours: r.Summary.P99WaitH}
		if bill.BoughtGPUH > 0 {
			in.USDPerGPUHour = bill.CostUSD / bill.BoughtGPUH
		}
		inputs[p.Name] = in
	}
	return tco.Compare(profiles, inputs)
}

// managedInput models a managed training service: every job gets whole
// GPUs (each task's share rounded up) for its run, from its start to its
// end, with no queue; paid at the reference replay's blended price.
func managedInput(ref *sim.Result, c *simCost) tco.Input {
	bought := 0.0
	for _, j := range ref.Jobs {
		if !j.Started || j.Tasks == 0 {
			continue
		}
		end := j.End
		if !j.Finished {
			end = durationOfHours(ref.Summary.MakespanH)
		}
		bought += float64(j.Tasks) * math.Ceil(j.GPUs/float64(j.Tasks)-1e-9) * (end - j.Start).Hours()
	}
	in := tco.Input{GPUHoursBought: bought * hoursPerMonth / math.Max(ref.Summary.MakespanH, 1)}
	if t := c.Bill.Total; t.BoughtGPUH > 0 {
		in.USDPerGPUHour = t.CostUSD / t.BoughtGPUH
	}
	return in
}

func loadProfiles(path string) ([]tco.Profile, error) {
	if path == "" {
		return tco.Defaults()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read platform profiles: %w", err)
	}
	return tco.Parse(data, path)
}

func writeTCO(w io.Writer, rows []tco.Row) {
	fmt.Fprintln(w, "\nmonthly cost per platform (fixed costs are editable assumptions: internal/cost/tco/profiles.yaml, --platforms):")
	fmt.Fprintf(w, "  %-42s %11s %12s %10s %11s %8s %12s %9s %9s\n", "platform", "GPU-h", "compute", "stor+net", "operations", "tools", "total USD", "wait mean", "wait p99")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-42s %11.0f %12.0f %10.0f %11.0f %8.0f %12.0f %8.2fh %8.2fh\n", r.Title, r.GPUHoursBought, r.ComputeUSD,
			r.StorageNetworkingUSD, r.OperationsUSD, r.ToolsUSD, r.TotalUSD, r.MeanWaitHours, r.P99WaitHours)
	}
	fmt.Fprintln(w, "  GPU-hours per month at the replay's pace; the managed service is modelled as whole GPUs per job for its run, no queue.")
}

func durationOfHours(h float64) time.Duration { return time.Duration(h * float64(time.Hour)) }

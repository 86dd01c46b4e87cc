package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
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
// or the built-in assumptions). A platform whose policy the replay did
// not run (--policies left it out) is left out, and named in leftOut.
func simTCO(path string, results []*sim.Result, costs map[string]*simCost) (rows []tco.Row, leftOut []string, err error) {
	profiles, err := loadProfiles(path)
	if err != nil {
		return nil, nil, err
	}
	byPolicy := map[string]*sim.Result{}
	for _, r := range results {
		byPolicy[r.Policy] = r
	}
	inputs := map[string]tco.Input{}
	var run []tco.Profile
	for _, p := range profiles {
		if p.Policy != "" && byPolicy[p.Policy] == nil {
			leftOut = append(leftOut, fmt.Sprintf("%s (policy %s not in --policies)", p.Title, p.Policy))
			continue
		}
		run = append(run, p)
		if p.Policy == "" {
			ref := byPolicy["corral"]
			if ref == nil {
				ref = results[0]
			}
			inputs[p.Name] = managedInput(ref, costs[ref.Policy])
			continue
		}
		r := byPolicy[p.Policy]
		inputs[p.Name] = policyInput(r, costs[r.Policy])
	}
	rows, err = tco.Compare(run, inputs)
	return rows, leftOut, err
}

// policyInput is what a policy's replay bought and did, scaled to a month
// of the replay's pace, at the replay's blended price.
func policyInput(r *sim.Result, c *simCost) tco.Input {
	bill := c.Bill.Total
	month := hoursPerMonth / math.Max(r.Summary.MakespanH, 1)
	in := tco.Input{GPUHoursBought: bill.BoughtGPUH * month, UsefulGPUHours: bill.UsedGPUH * month,
		UndoneGPUHours: r.Summary.UndoneGPUH * month, MeanWaitHours: r.Summary.MeanWaitH, P99WaitHours: r.Summary.P99WaitH}
	if bill.BoughtGPUH > 0 {
		in.USDPerGPUHour = bill.CostUSD / bill.BoughtGPUH
	}
	return in
}

// managedInput models a managed training service: every job accepted gets
// whole GPUs (each task's share rounded up) for its run time, with no
// queue, so it leaves no work undone; paid at the reference replay's
// blended price, over the reference replay's makespan.
func managedInput(ref *sim.Result, c *simCost) tco.Input {
	bought, useful := 0.0, 0.0
	for _, j := range ref.Jobs {
		if j.Tasks == 0 || j.GPUs <= 0 {
			continue
		}
		run := j.WorkGPUH / j.GPUs
		bought += float64(j.Tasks) * math.Ceil(j.GPUs/float64(j.Tasks)-1e-9) * run
		useful += j.WorkGPUH
	}
	month := hoursPerMonth / math.Max(ref.Summary.MakespanH, 1)
	in := tco.Input{GPUHoursBought: bought * month, UsefulGPUHours: useful * month}
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

// writeTCO prints the platforms' months: totals beside the cost of a
// useful GPU-hour and the work each left undone. Without autoscaling every
// platform pays for the whole fleet, idle nodes included, and the note
// says so.
func writeTCO(w io.Writer, rows []tco.Row, leftOut []string, autoscaled bool) {
	fmt.Fprintln(w, "\nmonthly cost per platform (fixed costs are editable assumptions: internal/cost/tco/profiles.yaml, --platforms):")
	fmt.Fprintf(w, "  %-42s %11s %12s %10s %11s %8s %12s %10s %10s %9s %9s\n", "platform", "GPU-h", "compute", "stor+net", "operations",
		"tools", "total USD", "USD/useful", "undone", "wait mean", "wait p99")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-42s %11.0f %12.0f %10.0f %11.0f %8.0f %12.0f %10s %10.0f %8.2fh %8.2fh\n", r.Title, r.GPUHoursBought, r.ComputeUSD,
			r.StorageNetworkingUSD, r.OperationsUSD, r.ToolsUSD, r.TotalUSD, perUseful(r.USDPerUsefulGPUHour), r.UndoneGPUHours,
			r.MeanWaitHours, r.P99WaitHours)
	}
	fmt.Fprintln(w, "  GPU-hours per month at the replay's pace; the managed service is modelled as whole GPUs per job for its run, no queue.")
	fmt.Fprintln(w, "  USD/useful: total per GPU-hour of work done and kept; undone: GPU-hours of work asked for and not done. Totals")
	fmt.Fprintln(w, "  compare equal work only where undone is equal.")
	if !autoscaled {
		writeWrapped(w, "  note: ", "        ", noAutoscaleNote, 120)
	}
	if len(leftOut) > 0 {
		writeWrapped(w, "  left out: ", "        ", strings.Join(leftOut, "; "), 120)
	}
}

// writeWrapped prints text in lines of at most width characters (longer
// words alone), the first line after first, the others after indent.
func writeWrapped(w io.Writer, first, indent, text string, width int) {
	line := first
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line = indent
		}
		if len(line) > len(indent) && line != first {
			line += " "
		}
		line += word
	}
	fmt.Fprintln(w, line)
}

// noAutoscaleNote warns that without autoscaling the platforms' compute
// costs do not follow how they pack.
const noAutoscaleNote = "without --autoscale, idle nodes are paid in every platform: each self-run platform buys the whole " +
	"fleet every hour however well it packs, so their compute costs are the same and only fixed costs and waits differ. " +
	"Add --autoscale 0: to let nodes leave when idle."

// perUseful formats a cost per useful GPU-hour, "-" when no work was done.
func perUseful(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}

func durationOfHours(h float64) time.Duration { return time.Duration(h * float64(time.Hour)) }

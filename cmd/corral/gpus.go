package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
)

const gpusUsage = `Usage: corral gpus [flags]

Lists the server's GPUs and what runs on each, like sinfo: the fraction of
each GPU in use and the jobs (with their rank, and MIG slice or share),
then how jobs are isolated: whose Unix user they run as, their cgroups,
and a warning for each fence that does not hold (no cgroups, no device
fencing). --json prints the API's answer, isolation included.
` + clientHelp + `
Flags:
`

func runGPUs(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("gpus", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, gpusUsage, args); err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(30 * time.Second)
	defer cancel()
	list, err := c.GPUList(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(list)
	}
	if err := printGPUs(stdout, list.GPUs); err != nil {
		return err
	}
	if list.Isolation != nil {
		fmt.Fprintln(stdout)
		printIsolation(stdout, *list.Isolation)
	}
	return nil
}

func printGPUs(stdout io.Writer, gpus []api.GPU) error {
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tMODEL\tMEMORY\tMIG\tUSED\tJOBS")
	for _, g := range gpus {
		var jobs []string
		for _, u := range g.Jobs {
			s := fmt.Sprintf("%s/%d(%s)", u.Job, u.Rank, u.Tenant)
			if u.Other {
				s = "another tenant's job"
			}
			if u.MIG != "" {
				s += " " + u.MIG
			} else if u.Share < 1 {
				s += fmt.Sprintf(" %g", u.Share)
			}
			jobs = append(jobs, s)
		}
		fmt.Fprintf(tw, "%d\t%s\t%dGiB\t%v\t%.0f%%\t%s\n", g.Index, g.Model, g.MemoryMiB/1024, g.MIG, g.Used*100, orDash(strings.Join(jobs, ", ")))
	}
	return tw.Flush()
}

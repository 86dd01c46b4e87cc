package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
)

const queueUsage = `Usage: corral queue [flags]

Lists your jobs that wait or run, like squeue: the waiting ones with the
reason they wait (ask 'corral explain JOB' for the details). --all adds the
jobs that have ended; admins see every tenant's jobs.
` + clientHelp + `
Flags:
`

func runQueue(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("queue", stderr)
	all := fs.Bool("all", false, "include jobs that have ended")
	state := fs.String("state", "", "only jobs in these `states` (comma-separated: pending,running,...)")
	tenant := fs.String("tenant", "", "only this tenant's jobs (admins)")
	asJSON := fs.Bool("json", false, `print JSON: the API's {"jobs": [...]}`)
	if err := parseFlags(fs, queueUsage, args); err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	q := url.Values{}
	switch {
	case *state != "":
		q["state"] = strings.Split(*state, ",")
	case !*all:
		q["state"] = []string{"pending", "preempted", "running"}
	}
	if *tenant != "" {
		q.Set("tenant", *tenant)
	}
	ctx, cancel := requestContext(30 * time.Second)
	defer cancel()
	jobs, err := c.Jobs(ctx, q)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, api.JobList{Jobs: append([]api.Job{}, jobs...)})
	}
	printQueue(stdout, jobs, time.Now())
	return nil
}

// printJSON writes v as the API does.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printQueue(w io.Writer, jobs []api.Job, now time.Time) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "JOBID\tNAME\tTENANT\tSTATE\tPRIO\tTASKS\tGPUS/TASK\tTIME\tNODES/GPUS\tREASON")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", j.ID, orDash(j.Request.Name), j.Tenant, slurmState(j.SlurmState, j.State),
			j.Request.Priority, max(j.Request.Tasks, 1), demand(j.Request), elapsed(j, now), placed(j), orDash(j.Reason))
	}
	tw.Flush()
}

// slurmState is the state as squeue and sacct name it (TIMEOUT,
// NODE_FAIL, ...); an older server sends only its own name.
func slurmState(slurm, state string) string {
	if slurm != "" {
		return slurm
	}
	return strings.ToUpper(state)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func demand(r api.JobRequest) string {
	switch {
	case r.GPUs > 0:
		return fmt.Sprint(r.GPUs)
	case r.MIG != "":
		return "mig:" + r.MIG
	case r.Share > 0:
		return fmt.Sprintf("share:%g", r.Share)
	}
	return "0"
}

func elapsed(j api.Job, now time.Time) string {
	if j.Started == nil || j.State == "pending" || j.State == "preempted" {
		return "-"
	}
	end := now
	if j.Ended != nil {
		end = *j.Ended
	}
	return end.Sub(*j.Started).Round(time.Second).String()
}

func placed(j api.Job) string {
	if j.State != "running" {
		return "-"
	}
	var parts []string
	for _, t := range j.Tasks {
		parts = append(parts, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(t.GPUs)), ","), "[]"))
	}
	return strings.Join(parts, " ")
}

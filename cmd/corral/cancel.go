package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
)

const cancelUsage = `Usage: corral cancel [flags] [JOB...]

Cancels jobs, like scancel: a waiting job at once; a running one gets
SIGTERM, then SIGKILL after its grace period (--grace at submit). The jobs
named and the filters select together, in one call to the server, which
cancels every waiting job before it stops any running one: the GPUs a
cancelled job frees never start a job being cancelled with it.

  corral cancel j000012 j000013
  corral cancel -u alice                 # every waiting and running job of alice (yours, or an admin's pick)
  corral cancel --state pending -n sweep # your waiting jobs named sweep
` + clientHelp + `
Flags:
`

func runCancel(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("cancel", stderr)
	var req api.CancelRequest
	fs.StringVar(&req.Tenant, "tenant", "", "only this tenant's jobs (admins: any tenant; others: their own)")
	alias(fs, "tenant", "u", "user")
	state := fs.String("state", "", "only jobs in these `states` (comma-separated: pending,preempted,running)")
	alias(fs, "state", "t")
	fs.StringVar(&req.Name, "name", "", "only jobs of this `name`")
	alias(fs, "name", "n", "jobname")
	asJSON := fs.Bool("json", false, `print JSON: the API's answer, {"jobs": [...], "errors": [...]}`)
	if err := parseFlags(fs, cancelUsage, args); err != nil {
		return err
	}
	req.IDs = fs.Args()
	if *state != "" {
		req.States = strings.Split(strings.ToLower(*state), ",")
	}
	if len(req.IDs) == 0 && req.Tenant == "" && len(req.States) == 0 && req.Name == "" {
		return errors.New("no job: give job IDs (corral queue lists them), or a filter: --user, --state, --name")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(30 * time.Second)
	defer cancel()
	res, err := c.CancelJobs(ctx, req)
	if err != nil {
		return err
	}
	var errs []error
	if *asJSON {
		errs = append(errs, printJSON(stdout, res)) // errors and all; the exit status says whether there were any
	}
	for _, j := range res.Jobs {
		switch {
		case *asJSON:
		case j.State == "running":
			fmt.Fprintf(stdout, "Stopping job %s\n", j.ID)
		default:
			fmt.Fprintf(stdout, "Cancelled job %s\n", j.ID)
		}
	}
	if len(res.Jobs) == 0 && len(res.Errors) == 0 {
		fmt.Fprintln(stderr, "corral cancel: no job matched")
	}
	for _, e := range res.Errors {
		errs = append(errs, errors.New(e))
	}
	return errors.Join(errs...)
}

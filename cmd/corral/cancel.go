package main

import (
	"errors"
	"fmt"
	"io"
	"time"
)

const cancelUsage = `Usage: corral cancel [flags] JOB...

Cancels jobs, like scancel: a waiting job at once; a running one gets
SIGTERM, then SIGKILL after its grace period (--grace at submit).
` + clientHelp + `
Flags:
`

func runCancel(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("cancel", stderr)
	if err := parseFlags(fs, cancelUsage, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("no job: give one or more job IDs (corral queue lists them)")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(30 * time.Second)
	defer cancel()
	var errs []error
	for _, id := range fs.Args() {
		j, err := c.Cancel(ctx, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		if j.State == "running" {
			fmt.Fprintf(stdout, "Stopping job %s\n", j.ID)
		} else {
			fmt.Fprintf(stdout, "Cancelled job %s\n", j.ID)
		}
	}
	return errors.Join(errs...)
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

const explainUsage = `Usage: corral explain [flags] JOB

Says why a job waits: what the scheduler found when it tried to place it
(GPUs busy, quota, priority), the jobs ahead of it, and when it could start
if the running jobs end at their time limits.
` + clientHelp + `
Flags:
`

func runExplain(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("explain", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, explainUsage, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("give one job ID")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(30 * time.Second)
	defer cancel()
	e, err := c.Explain(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(e)
	}
	fmt.Fprintf(stdout, "%s is %s: %s\n", e.ID, e.State, e.Summary)
	for _, r := range e.Reasons {
		fmt.Fprintf(stdout, "  - %s\n", r)
	}
	if e.EstimatedStart != nil {
		fmt.Fprintf(stdout, "Estimated start: %s (in %s), if running jobs end at their time limits\n",
			e.EstimatedStart.Local().Format(time.DateTime), time.Until(*e.EstimatedStart).Round(time.Second))
	} else if e.State == "pending" || e.State == "preempted" {
		fmt.Fprintln(stdout, "Estimated start: unknown (the jobs in its way have no time limits)")
	}
	return nil
}

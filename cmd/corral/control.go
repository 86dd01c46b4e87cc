package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/slurmfmt"
)

const holdUsage = `Usage: corral hold JOB...

Holds waiting jobs, like scontrol hold: they wait, showing JobHeldUser,
until 'corral release'. A job array's ID holds every waiting task;
j000017_3 names one task. A hold is kept by the server across restarts.
` + clientHelp + `
Flags:
`

const releaseUsage = `Usage: corral release JOB...

Releases held jobs, like scontrol release: they wait for GPUs again.
` + clientHelp + `
Flags:
`

const requeueUsage = `Usage: corral requeue [--hold] JOB...

Puts jobs back in the queue, like scontrol requeue: a running job is
stopped with its grace period (its attempt ends REQUEUED) and waits to
run again; an ended job waits to run again. --hold holds them there
(scontrol requeuehold).
` + clientHelp + `
Flags:
`

const updateUsage = `Usage: corral update JOB [flags]

Changes a waiting job, like scontrol update: its time limit, priority,
name, begin time, dependency, or its array's throttle. A job array's ID
changes every waiting task. A running job takes a new time limit and
name: its tenant may lower the limit (a limit already passed ends it as
TIMEOUT), only an admin may raise it.

  corral update j000017 --time 4:00:00 --priority 5
  corral update j000018 --time 0:30:00          # running: lower its limit
  corral update j000017 --begin now+2hours
  corral update j000017 --array-limit 4
` + clientHelp + `
Flags:
`

func runHold(args []string, stdout, stderr io.Writer) error {
	return controlMain("hold", holdUsage, args, stdout, stderr, func(ctx context.Context, c *client.Client, id string) ([]api.Job, error) {
		return c.Hold(ctx, id)
	}, "Held")
}

func runRelease(args []string, stdout, stderr io.Writer) error {
	return controlMain("release", releaseUsage, args, stdout, stderr, func(ctx context.Context, c *client.Client, id string) ([]api.Job, error) {
		return c.Release(ctx, id)
	}, "Released")
}

func runRequeue(args []string, stdout, stderr io.Writer) error {
	var hold bool
	return controlMainFlags("requeue", requeueUsage, args, stdout, stderr, func(fs flagDefiner) { fs.BoolVar(&hold, "hold", false, "hold them in the queue") },
		func(ctx context.Context, c *client.Client, id string) ([]api.Job, error) {
			return c.Requeue(ctx, id, hold)
		}, "Requeued")
}

func runUpdate(args []string, stdout, stderr io.Writer) error {
	var u api.JobUpdate
	var name, limit, begin, dep string
	var prio, arrayLimit int
	fs, cf := clientFlagSet("update", stderr)
	fs.StringVar(&name, "name", "", "the job's new `name`")
	alias(fs, "name", "J", "job-name")
	fs.Var(timeValue{&limit}, "time", "the new time `limit`")
	alias(fs, "time", "t")
	fs.IntVar(&prio, "priority", 0, "the new priority")
	fs.StringVar(&begin, "begin", "", "start no earlier than this `time` (\"\" to clear)")
	fs.StringVar(&dep, "dependency", "", "the new `dependency` (\"\" to clear)")
	alias(fs, "dependency", "d")
	fs.IntVar(&arrayLimit, "array-limit", 0, "the most tasks of the job's `array` that run at once (0: no limit)")
	asJSON := fs.Bool("json", false, jsonJobsUsage)
	args, err := parseInterleaved(fs, updateUsage, args)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return &usageError{cmd: "update", err: errors.New("give one job ID, then the fields to change")}
	}
	for _, f := range []struct {
		flag string
		set  func()
	}{
		{"name", func() { u.Name = &name }}, {"time", func() { u.Time = &limit }}, {"priority", func() { u.Priority = &prio }},
		{"begin", func() { u.Begin = &begin }}, {"dependency", func() { u.Dependency = &dep }}, {"array-limit", func() { u.ArrayLimit = &arrayLimit }},
	} {
		if isSet(fs, f.flag) {
			f.set()
		}
	}
	if u == (api.JobUpdate{}) {
		return &usageError{cmd: "update", err: errors.New("nothing to change: give --time, --priority, --name, --begin, --dependency or --array-limit")}
	}
	if u.Begin != nil && *u.Begin != "" {
		at, err := slurmfmt.ParseBegin(*u.Begin, time.Now())
		if err != nil {
			return &usageError{cmd: "update", err: fmt.Errorf("--begin %q: %w", *u.Begin, err)}
		}
		*u.Begin = at.Format(time.RFC3339)
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(30 * time.Second)
	defer cancel()
	jobs, err := c.Update(ctx, args[0], u)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, api.JobList{Jobs: jobs})
	}
	for _, j := range jobs {
		fmt.Fprintf(stdout, "Updated job %s\n", arrayOrID(j))
	}
	return nil
}

// jsonJobsUsage is the help of --json of the verbs that change jobs.
const jsonJobsUsage = `print JSON: the jobs changed, as the API's {"jobs": [...]}`

// flagDefiner is what a verb's extra flags are defined on.
type flagDefiner interface {
	BoolVar(p *bool, name string, value bool, usage string)
}

func controlMain(name, usage string, args []string, stdout, stderr io.Writer,
	do func(context.Context, *client.Client, string) ([]api.Job, error), done string) error {
	return controlMainFlags(name, usage, args, stdout, stderr, func(flagDefiner) {}, do, done)
}

// controlMainFlags runs a verb on each job named: hold, release,
// requeue. Each job changed is said on stdout; one that could not be is
// an error, after the others were tried.
func controlMainFlags(name, usage string, args []string, stdout, stderr io.Writer, define func(flagDefiner),
	do func(context.Context, *client.Client, string) ([]api.Job, error), done string) error {
	fs, cf := clientFlagSet(name, stderr)
	define(fs)
	asJSON := fs.Bool("json", false, jsonJobsUsage)
	ids, err := parseInterleaved(fs, usage, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return &usageError{cmd: name, err: errors.New("give job IDs (corral queue lists them)")}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(30 * time.Second)
	defer cancel()
	var errs []error
	changed := api.JobList{Jobs: []api.Job{}}
	for _, id := range ids {
		jobs, err := do(ctx, c, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		changed.Jobs = append(changed.Jobs, jobs...)
		for _, j := range jobs {
			if !*asJSON {
				fmt.Fprintf(stdout, "%s job %s\n", done, arrayOrID(j))
			}
		}
	}
	if *asJSON {
		errs = append(errs, printJSON(stdout, changed))
	}
	return errors.Join(errs...)
}

// arrayOrID is a job's ID as squeue shows it: j000017_3 for an array's
// task.
func arrayOrID(j api.Job) string {
	if j.ArrayID != "" {
		return j.ArrayID
	}
	return j.ID
}

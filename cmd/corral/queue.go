package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
)

const queueUsage = `Usage: corral queue [flags]

Lists your jobs that wait or run, like squeue: the waiting ones with the
reason they wait, as squeue names it (Resources, Dependency, JobHeldUser,
BeginTime, JobArrayTaskLimit, DependencyNeverSatisfied) and in words (ask
'corral explain JOB' for the details). A task of a job array shows as
j000017_3. --all adds the jobs that have ended; admins see every tenant's
jobs (--me: only their own).

Filters as squeue's: -u TENANT, -t STATES (corral's pending,running,... or
Slurm's PD,R,CD,F,CA,TO,NF,OOM,PR and their long names; all), -j JOBS (an
array's ID: all its tasks), -n NAMES, --me. -o FORMAT prints squeue's
fields: %i job (array task as ID_IDX), %A own ID, %F array ID, %K array
index, %j name, %u tenant, %t state (PD, R, ...), %T long state, %M time
used, %l time limit, %L time left, %D nodes, %C CPUs, %b GPUs, %R reason
or GPUs, %r reason, %Q priority, %V submitted, %S started, %%; %.8j
right-aligns and cuts to 8, %-8j left-aligns, %8j pads.

  corral queue -t PD -o '%.10i %.8j %.2t %.10M %.10l %R'
` + clientHelp + `
Flags:
`

func runQueue(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("queue", stderr)
	all := fs.Bool("all", false, "include jobs that have ended")
	state := fs.String("state", "", "only jobs in these `states` (comma-separated: pending,running or PD,R,CD,TO,...)")
	alias(fs, "state", "t", "states")
	tenant := fs.String("tenant", "", "only this tenant's jobs")
	alias(fs, "tenant", "u", "user")
	me := fs.Bool("me", false, "only your own jobs (for admins, who see everyone's)")
	jobsFlag := fs.String("jobs", "", "only these `jobs` (comma-separated; an array's ID: all its tasks)")
	alias(fs, "jobs", "j")
	names := fs.String("name", "", "only jobs of these `names` (comma-separated)")
	alias(fs, "name", "n")
	format := fs.String("format", "", "print these squeue `fields` instead of the table (%i %j %t %M %l %R ...)")
	alias(fs, "format", "o")
	noHeader := fs.Bool("noheader", false, "no header line")
	asJSON := fs.Bool("json", false, `print JSON: the API's {"jobs": [...]}`)
	if err := parseFlags(fs, queueUsage, args); err != nil {
		return err
	}
	filter, err := queueFilter(*state, *all, *jobsFlag, *names)
	if err != nil {
		return &usageError{cmd: "queue", err: err}
	}
	if *format != "" {
		if _, err := squeueLine(*format, api.Job{}, time.Now()); err != nil {
			return &usageError{cmd: "queue", err: err}
		}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(30 * time.Second)
	defer cancel()
	if *me {
		who, err := c.Whoami(ctx)
		if err != nil {
			return err
		}
		*tenant = who.Tenant
	}
	filter.tenant = *tenant
	q := url.Values{}
	q["state"] = filter.serverStates
	if *tenant != "" {
		q.Set("tenant", *tenant)
	}
	jobs, err := c.Jobs(ctx, q)
	if err != nil {
		return err
	}
	jobs = slices.DeleteFunc(jobs, func(j api.Job) bool { return !filter.keep(j) })
	switch {
	case *asJSON:
		return printJSON(stdout, api.JobList{Jobs: append([]api.Job{}, jobs...)})
	case *format != "":
		return printFormat(stdout, *format, jobs, !*noHeader, time.Now())
	}
	printQueue(stdout, jobs, time.Now())
	return nil
}

// filter is what corral queue keeps of the jobs the server sends.
type filter struct {
	serverStates []string        // asked of the server
	states       map[string]bool // corral's states and Slurm's names, upper case
	jobs         map[string]bool
	names        map[string]bool
	tenant       string
}

// slurmCodes are squeue's compact state codes.
var slurmCodes = map[string]string{"PD": "PENDING", "R": "RUNNING", "CD": "COMPLETED", "F": "FAILED", "CA": "CANCELLED",
	"PR": "PREEMPTED", "TO": "TIMEOUT", "NF": "NODE_FAIL", "OOM": "OUT_OF_MEMORY"}

// queueFilter reads the filters; without --state or --all the queue is
// the waiting and running jobs, as squeue's.
func queueFilter(states string, all bool, jobs, names string) (filter, error) {
	f := filter{states: map[string]bool{}, jobs: set(jobs), names: set(names)}
	for _, s := range strings.Split(strings.ToUpper(states), ",") {
		switch s = strings.TrimSpace(s); {
		case s == "":
		case s == "ALL":
			all = true
		case slurmCodes[s] != "":
			f.states[slurmCodes[s]] = true
		case isSlurmName(s) || knownCorralState(s):
			f.states[s] = true
		default:
			return f, fmt.Errorf("--state %q: want pending, preempted, running, succeeded, failed, cancelled, Slurm's PD, R, CD, F, CA, PR, TO, NF, OOM, their long names, or all", s)
		}
	}
	if len(f.states) == 0 && !all {
		f.serverStates = []string{"pending", "preempted", "running"}
	}
	return f, nil
}

func isSlurmName(s string) bool {
	for _, v := range slurmCodes {
		if v == s {
			return true
		}
	}
	return false
}

func knownCorralState(s string) bool {
	return slices.Contains([]string{"PENDING", "PREEMPTED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"}, s)
}

func set(list string) map[string]bool {
	out := map[string]bool{}
	for _, v := range strings.Split(list, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out[v] = true
		}
	}
	return out
}

// keep reports whether j passes the filters.
func (f filter) keep(j api.Job) bool {
	if f.tenant != "" && j.Tenant != f.tenant {
		return false
	}
	if len(f.states) > 0 && !f.states[strings.ToUpper(j.State)] && !f.states[j.SlurmState] {
		return false
	}
	if len(f.names) > 0 && !f.names[j.Request.Name] {
		return false
	}
	if len(f.jobs) == 0 {
		return true
	}
	for id := range f.jobs {
		if sameJob(id, j.ID) || sameJob(id, j.ArrayJob) || (j.ArrayID != "" && sameJob(id, j.ArrayID)) {
			return true
		}
	}
	return false
}

// sameJob reports whether two job IDs name the same job, j000017 and 17
// alike.
func sameJob(a, b string) bool {
	norm := func(s string) string { return strings.TrimLeft(strings.TrimPrefix(s, "j"), "0") }
	return b != "" && norm(a) == norm(b)
}

// printJSON writes v as the API does.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printQueue(w io.Writer, jobs []api.Job, now time.Time) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "JOBID\tNAME\tTENANT\tSTATE\tPRIO\tTASKS\tGPUS/TASK\tTIME\tTIME_LIMIT\tNODES/GPUS\tREASON")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", arrayOrID(j), orDash(j.Request.Name), j.Tenant, slurmState(j.SlurmState, j.State),
			j.Request.Priority, max(j.Request.Tasks, 1), demand(j.Request), elapsed(j, now), timeLimit(j), placed(j), reasonOf(j))
	}
	tw.Flush()
}

// reasonOf is the REASON column: squeue's code, then the words.
func reasonOf(j api.Job) string {
	switch {
	case j.PendingReason != "" && j.Reason != "" && !strings.HasPrefix(j.Reason, j.PendingReason):
		return "(" + j.PendingReason + ") " + j.Reason
	case j.Reason != "":
		return j.Reason
	case j.PendingReason != "":
		return "(" + j.PendingReason + ")"
	}
	return "-"
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
	case r.GPUs > 0 && r.Chosen != "":
		return fmt.Sprintf("%d (%s)", r.GPUs, r.Chosen)
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

// timeLimit is the job's time limit as squeue writes it, UNLIMITED when
// none.
func timeLimit(j api.Job) string {
	if j.Request.Time == "" {
		return "UNLIMITED"
	}
	d, err := time.ParseDuration(j.Request.Time)
	if err != nil {
		return j.Request.Time
	}
	return clock(d)
}

// clock writes a duration as squeue does: [D-]H:MM:SS, or M:SS under an
// hour.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	days, h, m, sec := s/86400, s/3600%24, s/60%60, s%60
	switch {
	case days > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, sec)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%d:%02d", m, sec)
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

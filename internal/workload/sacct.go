package workload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/slurmfmt"
)

// SacctFormat is the sacct command whose output ReadSacct reads: one line
// per job allocation (-X, no steps), |-separated (-P), with a header.
const SacctFormat = "sacct -a -X -P --format=JobID,User,Account,Submit,Start,End,State,AllocTRES,ReqTRES,NNodes,Priority,Timelimit -S <from> -E <to>"

// SacctSkipped counts the lines of sacct output that are not jobs that ran.
type SacctSkipped struct {
	Steps    int // job steps (JobID with a dot): run sacct with -X to leave them out
	NotRun   int // never started (Start Unknown or None)
	NotEnded int // still running (End Unknown)
}

func (s SacctSkipped) String() string {
	return fmt.Sprintf("%d steps, %d never started, %d still running skipped", s.Steps, s.NotRun, s.NotEnded)
}

// sacctTimeLayout is how sacct prints times (local time, no zone).
const sacctTimeLayout = "2006-01-02T15:04:05"

// ReadSacct reads the output of SacctFormat (fields in any order; JobID,
// Submit, Start, End, AllocTRES or ReqTRES, and Account or User are
// required). Each job that ran becomes an arrival with its true duration
// (End - Start, at least a second), its recorded start and end as its
// outcome, its Account (else User) as tenant, NNodes tasks sharing its
// TRES (cpu, mem, gres/gpu; a typed gres/gpu:<model> limits it to that model
// when corral's catalog knows the name),
// its Priority, and its Timelimit as the user's runtime estimate. Times
// count from the earliest submission. name labels errors (file:line).
func ReadSacct(r io.Reader, name string) (*Jobs, SacctSkipped, error) {
	var skipped SacctSkipped
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if !sc.Scan() {
		return nil, skipped, fmt.Errorf("%s: no header line (run %s)", name, SacctFormat)
	}
	col, err := sacctColumns(strings.Split(sc.Text(), "|"), name)
	if err != nil {
		return nil, skipped, err
	}
	type rowAt struct {
		a         Arrival
		start     time.Time
		submitted time.Time
	}
	var rows []rowAt
	for line := 2; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		f := sacctFields{fields: strings.Split(text, "|"), col: col}
		if len(f.fields) != len(col.names) {
			return nil, skipped, fmt.Errorf("%s:%d: %d fields, want %d as the header has", name, line, len(f.fields), len(col.names))
		}
		a, submit, start, ok, err := sacctJob(&f, &skipped)
		if err != nil {
			return nil, skipped, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if ok {
			rows = append(rows, rowAt{a, start, submit})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, skipped, fmt.Errorf("%s: %w", name, err)
	}
	out := &Jobs{Outcomes: map[string]Outcome{}}
	if len(rows) == 0 {
		return out, skipped, nil
	}
	t0 := rows[0].submitted
	for _, r := range rows {
		if r.submitted.Before(t0) {
			t0 = r.submitted
		}
	}
	for _, r := range rows {
		r.a.At = r.submitted.Sub(t0)
		o := Outcome{Start: r.start.Sub(t0), Started: true, Ended: true}
		o.End = o.Start + r.a.Duration
		if _, dup := out.Outcomes[r.a.Job.Name]; dup {
			return nil, skipped, fmt.Errorf("%s: job %s listed twice", name, r.a.Job.Name)
		}
		out.Outcomes[r.a.Job.Name] = o
		out.Workload.Arrivals = append(out.Workload.Arrivals, r.a)
		out.Workload.Horizon = max(out.Workload.Horizon, o.End)
	}
	SortArrivals(out.Workload.Arrivals)
	return out, skipped, nil
}

type sacctCols struct {
	names []string
	idx   map[string]int
}

func sacctColumns(header []string, name string) (sacctCols, error) {
	c := sacctCols{names: header, idx: map[string]int{}}
	for i, h := range header {
		c.idx[strings.TrimSpace(h)] = i
	}
	var missing []string
	for _, need := range [][]string{{"JobID"}, {"Submit"}, {"Start"}, {"End"}, {"AllocTRES", "ReqTRES"}, {"Account", "User"}} {
		found := false
		for _, n := range need {
			_, ok := c.idx[n]
			found = found || ok
		}
		if !found {
			missing = append(missing, strings.Join(need, " or "))
		}
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("%s:1: no %s column (run %s)", name, strings.Join(missing, ", no "), SacctFormat)
	}
	return c, nil
}

type sacctFields struct {
	fields []string
	col    sacctCols
}

// get is the first non-empty field of the columns named.
func (f *sacctFields) get(names ...string) string {
	for _, n := range names {
		if i, ok := f.col.idx[n]; ok {
			if v := strings.TrimSpace(f.fields[i]); v != "" {
				return v
			}
		}
	}
	return ""
}

func sacctTime(f *sacctFields, field string) (time.Time, bool, error) {
	v := f.get(field)
	switch v {
	case "", "Unknown", "None":
		return time.Time{}, false, nil
	}
	t, err := time.Parse(sacctTimeLayout, v)
	if err != nil {
		return t, false, fmt.Errorf("%s %q: want a time such as 2024-03-01T12:00:00", field, v)
	}
	return t, true, nil
}

// sacctJob turns one line into an arrival; ok is false for lines skipped.
func sacctJob(f *sacctFields, skipped *SacctSkipped) (a Arrival, submit, start time.Time, ok bool, err error) {
	id := f.get("JobID")
	if id == "" {
		return a, submit, start, false, errors.New("empty JobID")
	}
	if strings.Contains(id, ".") {
		skipped.Steps++
		return a, submit, start, false, nil
	}
	submit, hasSubmit, err := sacctTime(f, "Submit")
	if err == nil && !hasSubmit {
		err = fmt.Errorf("job %s: no Submit time", id)
	}
	start, started, err2 := sacctTime(f, "Start")
	end, ended, err3 := sacctTime(f, "End")
	if err = errors.Join(err, err2, err3); err != nil {
		return a, submit, start, false, err
	}
	switch {
	case !started:
		skipped.NotRun++
		return a, submit, start, false, nil
	case !ended:
		skipped.NotEnded++
		return a, submit, start, false, nil
	case end.Before(start) || start.Before(submit):
		return a, submit, start, false, fmt.Errorf("job %s: Submit %s, Start %s, End %s out of order", id,
			submit.Format(sacctTimeLayout), start.Format(sacctTimeLayout), end.Format(sacctTimeLayout))
	}
	j, err := sacctShape(f, id)
	if err != nil {
		return a, submit, start, false, err
	}
	a = Arrival{Job: j, Duration: max(end.Sub(start), time.Second), Class: Recorded}
	return a, submit, start, true, a.validate()
}

// sacctShape reads a job's tenant, tasks, priority and estimate.
func sacctShape(f *sacctFields, id string) (*job.Job, error) {
	tres := f.get("AllocTRES", "ReqTRES")
	t, err := parseTRES(tres)
	if err != nil {
		return nil, fmt.Errorf("job %s: TRES %q: %w", id, tres, err)
	}
	if n := f.get("NNodes"); n != "" {
		if t.nodes, err = strconv.Atoi(n); err != nil || t.nodes < 1 {
			return nil, fmt.Errorf("job %s: NNodes %q: want a whole number at least 1", id, n)
		}
	}
	j := &job.Job{Name: id, Tenant: f.get("Account", "User")}
	if j.Tenant == "" {
		return nil, fmt.Errorf("job %s: no Account or User", id)
	}
	if p := f.get("Priority"); p != "" {
		if j.Priority, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("job %s: Priority %q: want a whole number", id, p)
		}
	}
	if tl := f.get("Timelimit"); tl != "" && tl != "UNLIMITED" && tl != "Partition_Limit" {
		if j.Runtime, err = slurmfmt.ParseTime(tl); err != nil {
			return nil, fmt.Errorf("job %s: Timelimit %q: %w", id, tl, err)
		}
	}
	j.Groups = []job.Group{t.group()}
	return j, nil
}

// tres is what a job held, in total.
type tres struct {
	cpus, gpus, nodes int
	memMiB            int64
	model             string
}

// parseTRES reads Slurm's TRES list: cpu=16,mem=128G,node=2,gres/gpu=4,
// gres/gpu:a100=4 (billing and other TRES are ignored).
func parseTRES(s string) (tres, error) {
	t := tres{nodes: 1}
	for item := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			if item == "" {
				continue
			}
			return t, fmt.Errorf("%q: want key=value", item)
		}
		var err error
		switch {
		case k == "cpu":
			t.cpus, err = strconv.Atoi(v)
		case k == "node":
			t.nodes, err = strconv.Atoi(v)
		case k == "mem":
			t.memMiB, err = slurmfmt.ParseMem(v)
		case k == "gres/gpu":
			t.gpus, err = strconv.Atoi(v)
		case strings.HasPrefix(k, "gres/gpu:"):
			t.model = strings.TrimPrefix(k, "gres/gpu:")
			if t.gpus == 0 {
				t.gpus, err = strconv.Atoi(v)
			}
		}
		if err != nil || t.cpus < 0 || t.gpus < 0 || t.nodes < 1 {
			return t, fmt.Errorf("%s=%q: want a count (mem: a size such as 64G)", k, v)
		}
	}
	return t, nil
}

// group spreads the job's TRES over its nodes, one task per node; GPUs
// that do not divide evenly make one task per GPU instead.
func (t tres) group() job.Group {
	tasks, gpus := t.nodes, 0
	if t.gpus > 0 {
		if t.gpus%t.nodes == 0 {
			gpus = t.gpus / t.nodes
		} else {
			tasks, gpus = t.gpus, 1
		}
	}
	d := job.Demand{GPUs: gpus, CPUMilli: int64(t.cpus) * 1000 / int64(tasks), MemoryMiB: t.memMiB / int64(tasks)}
	if m, err := gpu.Lookup(t.model); t.model != "" && err == nil {
		d.Models = []string{m.Name}
	}
	return job.Group{Name: "tasks", Count: tasks, Task: d}
}

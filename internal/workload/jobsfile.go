package workload

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/quantity"
)

// Recorded is the class of arrivals read from a jobs file or from sacct
// when the file names none.
const Recorded = "recorded"

// JobsColumns are the columns of a jobs file, in the order WriteJobs
// writes them. ReadJobs takes them in any order; only name, submit_s,
// duration_s, tenant and tasks are required.
//
//	name          the job's name, unique in the file
//	submit_s      arrival, seconds since the start of the workload
//	duration_s    true run time to completion, seconds
//	tenant        who submitted it
//	tasks         tasks, all of one shape; a gang unless min_tasks is set
//	gpus          whole GPUs per task (0: none or a share)
//	share         a fraction of one GPU per task, 0 < share < 1
//	mig           a MIG profile per task, such as 1g.10gb
//	cpu_milli     CPU per task, thousandths of a core
//	mem_mib       memory per task, MiB
//	priority      higher runs first where the policy orders by priority
//	checkpoint_s  how often it saves its progress, seconds (0: never)
//	runtime_s     the user's estimate of its run time (0: none given)
//	min_tasks     fewest tasks it may start with (0: all)
//	preemptible   true when it may be stopped to make room
//	models        allowed GPU models, separated by |
//	class         training, inference... (default recorded)
//	start_s       recorded start, seconds (empty: not run or not recorded)
//	end_s         recorded end, seconds (empty: not ended)
var JobsColumns = []string{"name", "submit_s", "duration_s", "tenant", "tasks", "gpus", "share", "mig",
	"cpu_milli", "mem_mib", "priority", "checkpoint_s", "runtime_s", "min_tasks", "preemptible", "models",
	"class", "start_s", "end_s"}

var requiredColumns = []string{"name", "submit_s", "duration_s", "tenant", "tasks"}

// AskColumns are the columns ReadJobs also takes for a job that asks for
// GPU memory in all (job.MemoryAsk), and WriteJobs does not write:
//
//	gpu_memory          GPU memory in all, such as 600G or 640Gi; the
//	                    scheduler picks the model and the count, so tasks
//	                    is 1 and gpus, share and mig are empty; models
//	                    are the models allowed
//	gpu_memory_per_gpu  the least memory each GPU must have
var AskColumns = []string{"gpu_memory", "gpu_memory_per_gpu"}

// Outcome is what happened to one job in a recorded run, in time since
// the start of the workload.
type Outcome struct {
	Start, End time.Duration
	Started    bool // Start is known
	Ended      bool // End is known
}

// Jobs is a workload as a jobs file holds it, with what happened to each
// job where the file records it (by job name).
type Jobs struct {
	Workload Workload
	Outcomes map[string]Outcome
	// Machines are the machines the jobs ran on, where the file's fleet
	// line (FleetLinePrefix) says; nil where it does not.
	Machines *Machines
}

// ReadJobs reads a jobs file: CSV with a header row naming JobsColumns,
// lines starting with # ignored but a fleet line (FleetLinePrefix) before
// the header, which sets Machines. name labels errors (file:line: ...). The
// arrivals come back sorted; the horizon is the last arrival or recorded
// end, whichever is later.
func ReadJobs(r io.Reader, name string) (*Jobs, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	machines, err := readFleetLine(data, name)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	col, err := columnIndex(header, name)
	if err != nil {
		return nil, err
	}
	out := &Jobs{Outcomes: map[string]Outcome{}, Machines: machines}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		a, o, err := parseJobRow(rec, col)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if _, dup := out.Outcomes[a.Job.Name]; dup {
			return nil, fmt.Errorf("%s:%d: job %q named twice", name, line, a.Job.Name)
		}
		out.Outcomes[a.Job.Name] = o
		out.Workload.Arrivals = append(out.Workload.Arrivals, a)
		out.Workload.Horizon = max(out.Workload.Horizon, a.At, o.End)
	}
	SortArrivals(out.Workload.Arrivals)
	return out, nil
}

// columnIndex maps each known column to its position, refusing unknown,
// repeated and missing required columns.
func columnIndex(header []string, name string) (map[string]int, error) {
	known := map[string]bool{}
	for _, c := range append(slices.Clip(JobsColumns), AskColumns...) {
		known[c] = true
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if !known[h] {
			return nil, fmt.Errorf("%s:1: unknown column %q (want %s)", name, h, strings.Join(append(slices.Clip(JobsColumns), AskColumns...), ", "))
		}
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("%s:1: column %q twice", name, h)
		}
		col[h] = i
	}
	for _, c := range requiredColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s:1: no column %q (required: %s)", name, c, strings.Join(requiredColumns, ", "))
		}
	}
	return col, nil
}

// row reads the fields of one record by column name; absent columns and
// empty fields read as "".
type row struct {
	rec []string
	col map[string]int
	err error
}

func (r *row) str(c string) string {
	i, ok := r.col[c]
	if !ok || i >= len(r.rec) {
		return ""
	}
	return strings.TrimSpace(r.rec[i])
}

func (r *row) seconds(c string) time.Duration {
	s := r.str(c)
	if s == "" || r.err != nil {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || v > 1e12 {
		r.err = fmt.Errorf("%s %q: want seconds, a number at least 0", c, s)
		return 0
	}
	return time.Duration(v * float64(time.Second)).Round(time.Millisecond)
}

func (r *row) int(c string, minimum int64) int64 {
	s := r.str(c)
	if s == "" || r.err != nil {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < minimum {
		r.err = fmt.Errorf("%s %q: want a whole number at least %d", c, s, minimum)
		return 0
	}
	return v
}

// memoryAsk reads the row's ask by GPU memory into j: the ask, with the
// row's models, and one task of its CPU and memory.
func (r *row) memoryAsk(j *job.Job) {
	total := r.str("gpu_memory")
	if total == "" || r.err != nil {
		if r.str("gpu_memory_per_gpu") != "" && r.err == nil {
			r.err = errors.New("gpu_memory_per_gpu goes with gpu_memory (the GPU memory in all)")
		}
		return
	}
	a := &job.MemoryAsk{}
	var err error
	if a.TotalMiB, err = quantity.GPUMemory(total); err != nil {
		r.err = fmt.Errorf("gpu_memory: %w", err)
		return
	}
	if per := r.str("gpu_memory_per_gpu"); per != "" {
		if a.MinPerGPUMiB, err = quantity.GPUMemory(per); err != nil {
			r.err = fmt.Errorf("gpu_memory_per_gpu: %w", err)
			return
		}
	}
	g := &j.Groups[0]
	a.Models, g.Task.Models = g.Task.Models, nil
	j.ByGPUMemory = a
}

func parseJobRow(rec []string, col map[string]int) (Arrival, Outcome, error) {
	r := &row{rec: rec, col: col}
	j := &job.Job{Name: r.str("name"), Tenant: r.str("tenant")}
	a := Arrival{Job: j, At: r.seconds("submit_s"), Duration: r.seconds("duration_s"), Class: r.str("class")}
	if a.Class == "" {
		a.Class = Recorded
	}
	d := job.Demand{GPUs: int(r.int("gpus", 0)), MIG: r.str("mig"), CPUMilli: r.int("cpu_milli", 0), MemoryMiB: r.int("mem_mib", 0)}
	if s := r.str("share"); s != "" && r.err == nil {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 || v >= 1 {
			r.err = fmt.Errorf("share %q: want a fraction of one GPU, 0 < share < 1", s)
		}
		d.GPUMilli = int(math.Round(v * 1000))
	}
	if m := r.str("models"); m != "" {
		d.Models = strings.Split(m, "|")
	}
	j.Groups = []job.Group{{Name: "tasks", Count: int(r.int("tasks", 1)), Task: d}}
	j.Priority = int(r.int("priority", math.MinInt32))
	j.CheckpointEvery = r.seconds("checkpoint_s")
	j.Runtime = r.seconds("runtime_s")
	j.MinMember = int(r.int("min_tasks", 0))
	switch p := r.str("preemptible"); p {
	case "", "false", "0":
	case "true", "1":
		j.Preemptible = true
	default:
		if r.err == nil {
			r.err = fmt.Errorf("preemptible %q: want true or false", p)
		}
	}
	r.memoryAsk(j)
	var o Outcome
	if r.str("start_s") != "" {
		o.Start, o.Started = r.seconds("start_s"), true
	}
	if r.str("end_s") != "" {
		o.End, o.Ended = r.seconds("end_s"), true
	}
	if r.err != nil {
		return a, o, fmt.Errorf("job %q: %w", j.Name, r.err)
	}
	return a, o, a.validate()
}

// WriteJobs writes w as a jobs file, with the outcomes given (by job
// name; nil for none). Only the first task group of a job is written: the
// format holds jobs of one shape.
func WriteJobs(out io.Writer, w *Workload, outcomes map[string]Outcome) error {
	cw := csv.NewWriter(out)
	if err := cw.Write(JobsColumns); err != nil {
		return fmt.Errorf("jobs file: %w", err)
	}
	for _, a := range w.Arrivals {
		if err := cw.Write(jobRow(a, outcomes[a.Job.Name])); err != nil {
			return fmt.Errorf("jobs file: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("jobs file: %w", err)
	}
	return nil
}

func jobRow(a Arrival, o Outcome) []string {
	j := a.Job
	var g job.Group
	if len(j.Groups) > 0 {
		g = j.Groups[0]
	}
	d := g.Task
	share := ""
	if d.GPUMilli > 0 {
		share = strconv.FormatFloat(float64(d.GPUMilli)/1000, 'f', -1, 64)
	}
	secs := func(t time.Duration) string { return strconv.FormatFloat(t.Seconds(), 'f', -1, 64) }
	opt := func(on bool, t time.Duration) string {
		if !on {
			return ""
		}
		return secs(t)
	}
	return []string{j.Name, secs(a.At), secs(a.Duration), j.Tenant, strconv.Itoa(g.Count), strconv.Itoa(d.GPUs), share, d.MIG,
		strconv.FormatInt(d.CPUMilli, 10), strconv.FormatInt(d.MemoryMiB, 10), strconv.Itoa(j.Priority),
		secs(j.CheckpointEvery), secs(j.Runtime), strconv.Itoa(j.MinMember), strconv.FormatBool(j.Preemptible),
		strings.Join(d.Models, "|"), a.Class, opt(o.Started, o.Start), opt(o.Ended, o.End)}
}

// ReadJobsFile reads the jobs file at path.
func ReadJobsFile(path string) (*Jobs, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadJobs(f, path)
}

// WriteJobsFile writes j, with its outcomes, as a jobs file at path.
func WriteJobsFile(path string, j *Jobs) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteJobs(f, &j.Workload, j.Outcomes); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

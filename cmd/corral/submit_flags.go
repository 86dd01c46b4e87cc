package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/quantity"
	"github.com/corral-sched/corral/internal/sbatch"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/slurmfmt"
)

func defineSubmitFlags(fs *flag.FlagSet, r *api.JobRequest, sf *submitFlags) {
	fs.StringVar(&sf.file, "f", "", "read the job from this YAML `file`")
	fs.StringVar(&r.Name, "name", "", "job `name` (letters, digits, '.', '_', '-')")
	alias(fs, "name", "J", "job-name")
	fs.Var(gpusValue{&sf.gpus, true}, "gpus", "`GPUs` for the whole job, shared out among its tasks, or TYPE:N (0: a job without GPUs)")
	alias(fs, "gpus", "G", "gpus-per-node")
	fs.Var(gpusValue{&sf.gpusPerTask, false}, "gpus-per-task", "whole `GPUs` per task, or TYPE:N")
	fs.Var(gresValue{&sf.gres}, "gres", "`gpu:N` or gpu:TYPE:N GPUs for the whole job, shared out among its tasks")
	fs.Var(gpuMemValue{&r.GPUMemoryMiB}, "gpu-mem", "GPU `memory` in all instead of GPUs, such as 600G: the scheduler picks the model and the count")
	fs.Var(gpuMemValue{&r.GPUMemoryPerGPUMiB}, "gpu-mem-per-gpu", "with --gpu-mem, the least `memory` each GPU must have, such as 80G")
	fs.Func("gpu-model", "with --gpu-mem, the GPU `models` allowed, comma-separated (H100-80GB,A100-80GB)", func(s string) error {
		r.GPUModels = strings.Split(s, ",")
		return nil
	})
	fs.StringVar(&r.MIG, "mig", "", "a MIG `profile` per task, such as 1g.10gb")
	fs.Float64Var(&r.Share, "share", 0, "a `fraction` of one GPU per task, such as 0.25")
	fs.Float64Var(&r.CPU, "cpu", 0, "CPU `cores` per task")
	alias(fs, "cpu", "c", "cpus-per-task")
	fs.Float64Var(&sf.cpusPerGPU, "cpus-per-gpu", 0, "CPU `cores` per GPU of a task")
	fs.Var(memValue{&sf.mem}, "mem", "`memory` for the whole job, shared out among its tasks: MiB, or with a unit K, M, G, T (16G)")
	fs.Var(memValue{&sf.memPerCPU}, "mem-per-cpu", "`memory` per CPU core of a task")
	fs.Var(memValue{&sf.memPerGPU}, "mem-per-gpu", "`memory` per GPU of a task")
	fs.IntVar(&r.Tasks, "tasks", 0, "tasks in the gang (default 1)")
	alias(fs, "tasks", "n", "ntasks", "ntasks-per-node")
	fs.Var(nodesValue{}, "nodes", "`1`: this server is one machine")
	alias(fs, "nodes", "N")
	fs.Var(timeValue{&r.Time}, "time", "time `limit`: minutes (90), H:M:S, D-H:M:S, or 90m, 2h, 1d")
	alias(fs, "time", "t")
	fs.IntVar(&r.Priority, "priority", 0, "priority; higher runs first and may preempt lower")
	fs.IntVar(&sf.nice, "nice", 0, "lower the priority by `N` (sbatch's --nice)")
	fs.StringVar(&r.Queue, "queue", "", "queue `name`")
	fs.StringVar(&r.Image, "image", "", "run the command in a container of this `image` (the server needs --container-runtime)")
	fs.StringVar(&r.CheckpointEvery, "checkpoint-every", "", "how often the job checkpoints, such as 30m")
	fs.StringVar(&r.Grace, "grace", "", "SIGTERM to SIGKILL delay when the job is stopped (default 10s)")
	fs.StringVar(&r.WorkDir, "workdir", "", "working `directory` (absolute; default the current one)")
	alias(fs, "workdir", "D", "chdir")
	fs.BoolVar(&r.Requeue, "requeue", false, "requeue the job if it is lost across a server restart or its GPU fails")
	fs.BoolVar(&sf.noRequeue, "no-requeue", false, "do not requeue it (the default)")
	fs.StringVar(&sf.export, "export", "ALL", "the environment sent with the job, as sbatch: ALL, NONE, VAR1,VAR2=val or ALL,VAR=val")
	fs.Var(&sf.env, "env", "`KEY=VALUE` for the job's environment (repeatable)")
	fs.BoolVar(&sf.json, "json", false, "print the submitted job as JSON")
	defineBatchFlags(fs, r, sf)
}

// defineBatchFlags defines sbatch's flags beyond the resources, and
// takes the options corral ignores, saying so.
func defineBatchFlags(fs *flag.FlagSet, r *api.JobRequest, sf *submitFlags) {
	fs.StringVar(&r.Array, "array", "", "a job array: `indices` 0-99, 1,3,5-7 or 0-15:4, %N runs at most N at once")
	alias(fs, "array", "a")
	fs.StringVar(&r.Dependency, "dependency", "", "start after other jobs: `afterok:ID[:ID]`, afterany, afternotok, after (after:ID+MIN: MIN minutes after ID started), singleton; ',' all, '?' any")
	alias(fs, "dependency", "d")
	fs.Var(yesNoValue{&r.KillOnInvalidDep}, "kill-on-invalid-dep", "`yes`: cancel the job when its dependency can never be met (no: it waits, saying so)")
	fs.BoolVar(&r.Hold, "hold", false, "submit the job held: it waits until 'corral release'")
	alias(fs, "hold", "H")
	fs.StringVar(&sf.begin, "begin", "", "start no earlier than this `time`: now+1hour, 16:00, 2026-04-01T08:00, midnight, tomorrow")
	alias(fs, "begin", "b")
	fs.StringVar(&r.Output, "output", "", "copy standard output (and error, without -e) to this `file`: %j job, %x name, %A array, %a index, %u user")
	alias(fs, "output", "o")
	fs.StringVar(&r.Error, "error", "", "copy standard error to this `file` (patterns as -o)")
	alias(fs, "error", "e")
	fs.StringVar(&r.OpenMode, "open-mode", "", "`truncate` (default) or append the -o and -e files")
	fs.StringVar(&r.Signal, "signal", "", "send this signal before the time limit: `[B:]SIG[@SECONDS]`, such as USR1@120")
	fs.StringVar(&sf.wrap, "wrap", "", "run this shell `command` as the job's script")
	fs.BoolVar(&sf.parsable, "parsable", false, "print only the job ID")
	fs.BoolVar(&sf.wait, "wait", false, "wait for the job to end and exit with its exit code")
	alias(fs, "wait", "W")
	for _, o := range sbatch.IgnoredOptions() {
		for _, name := range []string{o.Long, o.Short} {
			if name != "" && fs.Lookup(name) == nil {
				fs.Var(noteValue{name: o.Long, why: o.Why, value: o.TakesValue, notes: &sf.notes}, name, ignoredPrefix+o.Why)
			}
		}
	}
}

// readScript reads a batch script's #SBATCH lines into the flags the
// command line did not set, a group of flags at a time (a GPU flag on
// the command line overrides every GPU directive), and returns the
// script.
func readScript(fs *flag.FlagSet, path string, sf *submitFlags) ([]byte, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := sbatch.Parse(path, body)
	if err != nil {
		return nil, err
	}
	args, notes, err := sbatch.Interpret(s)
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		sf.notes = append(sf.notes, n.Text)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[group(canonical(f))] = true })
	for _, a := range args {
		f := fs.Lookup(a.Flag)
		if f == nil {
			panic("sbatch maps to no submit flag " + a.Flag) // the table and the flags are one program's
		}
		if given[group(canonical(f))] {
			continue
		}
		if err := fs.Set(a.Flag, a.Value); err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w", path, a.Line, a.Text, err)
		}
	}
	return body, nil
}

// group is the set of flags that ask for one thing, which a flag on
// the command line overrides together.
func group(name string) string {
	switch name {
	case "gpus", "gpus-per-task", "gres", "mig", "share", "gpu-mem", "gpu-mem-per-gpu", "gpu-model":
		return "gpus"
	case "mem", "mem-per-cpu", "mem-per-gpu":
		return "mem"
	case "cpu", "cpus-per-gpu":
		return "cpu"
	case "requeue", "no-requeue":
		return "requeue"
	}
	return name
}

// gpuDemand applies the GPU flags, then the memory and CPU flags that
// depend on the tasks and their GPUs, and refuses a job that asks for no
// GPU at all unless the user said so (--gpus 0, gpus: 0 in the file): a
// GPU scheduler should not quietly run a job without one.
func gpuDemand(fs *flag.FlagSet, req *api.JobRequest, sf *submitFlags, file []byte) error {
	asked := 0
	for _, a := range []gpuAsk{sf.gpus, sf.gpusPerTask, sf.gres} {
		if a.set {
			asked++
		}
	}
	if asked > 1 {
		return errors.New("give one of -G/--gpus, --gpus-per-task and --gres")
	}
	if isSet(fs, "gpu-mem") && (asked > 0 || isSet(fs, "mig", "share", "tasks")) {
		return errors.New("--gpu-mem asks for GPU memory in all and the scheduler picks the GPUs and the tasks: give no -G/--gpus, --gpus-per-task, --gres, --mig, --share or -n/--tasks with it")
	}
	if !isSet(fs, "gpu-mem") && isSet(fs, "gpu-mem-per-gpu", "gpu-model") {
		return errors.New("--gpu-mem-per-gpu and --gpu-model go with --gpu-mem")
	}
	for _, a := range []gpuAsk{sf.gpus, sf.gpusPerTask, sf.gres} {
		if err := a.apply(req); err != nil {
			return err
		}
	}
	if err := memAndCPU(fs, req, sf); err != nil {
		return err
	}
	if asked > 0 || isSet(fs, "mig", "share", "gpu-mem") || api.JobFileSets(file, "gpus", "mig", "share", "gpu_memory_mib") {
		return nil
	}
	return errors.New("no GPUs asked for: give -G/--gpus N, --gpus-per-task N, --gres gpu:N, --mig PROFILE or --share F; --gpus 0 runs the job without GPUs")
}

// memAndCPU turns Slurm's memory and CPU flags into the request's per
// task amounts: --mem is the job's (one node), --mem-per-cpu and
// --mem-per-gpu multiply a task's cores and GPUs, --cpus-per-gpu its
// GPUs.
func memAndCPU(fs *flag.FlagSet, req *api.JobRequest, sf *submitFlags) error {
	if n := countSet(fs, "mem", "mem-per-cpu", "mem-per-gpu"); n > 1 {
		return errors.New("give one of --mem, --mem-per-cpu and --mem-per-gpu")
	}
	if isSet(fs, "cpu") && isSet(fs, "cpus-per-gpu") {
		return errors.New("give one of -c/--cpus-per-task and --cpus-per-gpu")
	}
	tasks := int64(max(req.Tasks, 1))
	gpus := float64(max(req.GPUs, 1))
	if isSet(fs, "cpus-per-gpu") {
		req.CPU = sf.cpusPerGPU * gpus
	}
	switch {
	case isSet(fs, "mem"):
		if req.MemoryMiB = sf.mem / tasks; req.MemoryMiB == 0 {
			return fmt.Errorf("--mem %dM for %d tasks: less than 1 MiB each", sf.mem, tasks)
		}
	case isSet(fs, "mem-per-cpu"):
		req.MemoryMiB = int64(float64(sf.memPerCPU) * max(req.CPU, 1))
	case isSet(fs, "mem-per-gpu"):
		req.MemoryMiB = int64(float64(sf.memPerGPU) * gpus)
	}
	return nil
}

func countSet(fs *flag.FlagSet, names ...string) int {
	n := 0
	for _, name := range names {
		if isSet(fs, name) {
			n++
		}
	}
	return n
}

// slurmHabits applies the flags that change other fields: --nice lowers
// the priority, --begin is read by this machine's clock, --no-requeue.
func slurmHabits(fs *flag.FlagSet, req *api.JobRequest, sf *submitFlags) error {
	req.Priority -= sf.nice
	if sf.noRequeue {
		req.Requeue = false
	}
	if sf.begin != "" {
		at, err := slurmfmt.ParseBegin(sf.begin, time.Now())
		if err != nil {
			return fmt.Errorf("--begin %q: %w", sf.begin, err)
		}
		req.Begin = at.Format(time.RFC3339)
	}
	return nil
}

// ownUmask is this process's umask in octal, as sbatch sends it
// (SLURM_UMASK), read from /proc without changing it.
func ownUmask() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// timeValue is -t/--time: a Go duration or one of Slurm's forms, checked
// as it is parsed so that the error names the flag.
type timeValue struct{ to *string }

func (v timeValue) String() string {
	if v.to == nil {
		return ""
	}
	return *v.to
}

func (v timeValue) Set(s string) error {
	if _, err := slurmfmt.ParseTime(s); err != nil {
		return err
	}
	*v.to = s
	return nil
}

// memValue is --mem and its kin: MiB, or a size with Slurm's units.
// gpuMemValue is GPU memory as quantity.GPUMemory reads it: 600G, 80GB,
// 640Gi.
type gpuMemValue struct{ to *int64 }

func (v gpuMemValue) String() string {
	if v.to == nil || *v.to == 0 {
		return ""
	}
	return fmt.Sprintf("%dMi", *v.to)
}

func (v gpuMemValue) Set(s string) error {
	mib, err := quantity.GPUMemory(s)
	if err != nil {
		return err
	}
	*v.to = mib
	return nil
}

type memValue struct{ to *int64 }

func (v memValue) String() string {
	if v.to == nil || *v.to == 0 {
		return ""
	}
	return fmt.Sprintf("%dM", *v.to)
}

func (v memValue) Set(s string) error {
	mib, err := slurmfmt.ParseMem(s)
	if err != nil {
		return err
	}
	*v.to = mib
	return nil
}

// nodesValue is -N/--nodes: one machine takes 1, or a range from 1.
type nodesValue struct{}

func (nodesValue) String() string { return "" }

func (nodesValue) Set(s string) error {
	lo, _, _ := strings.Cut(s, "-")
	if n, err := strconv.Atoi(lo); err != nil || n != 1 {
		return fmt.Errorf("%s nodes: this server is one machine; ask for the GPUs of one node", s)
	}
	return nil
}

// yesNoValue is a flag that takes yes or no, as sbatch's.
type yesNoValue struct{ to *bool }

func (v yesNoValue) String() string {
	if v.to != nil && *v.to {
		return "yes"
	}
	return ""
}

func (v yesNoValue) Set(s string) error {
	switch strings.ToLower(s) {
	case "yes", "y", "true", "1":
		*v.to = true
	case "no", "n", "false", "0":
		*v.to = false
	default:
		return errors.New("want yes or no")
	}
	return nil
}

// noteValue is an sbatch option corral takes and ignores: setting it
// notes why, for stderr.
type noteValue struct {
	name, why string
	value     bool
	notes     *[]string
}

func (v noteValue) String() string   { return "" }
func (v noteValue) IsBoolFlag() bool { return !v.value }

func (v noteValue) Set(string) error {
	*v.notes = append(*v.notes, "--"+v.name+" ignored: "+v.why)
	return nil
}

// gpuAsk is a GPU request as Slurm users write it: --gpus [TYPE:]N and
// --gres gpu[:TYPE][:N] for the whole job (which runs on this one
// machine: Slurm's --gres counts per node), --gpus-per-task per task.
type gpuAsk struct {
	flag   string
	typ    string
	count  int
	perJob bool
	set    bool
}

type gpusValue struct {
	a      *gpuAsk
	perJob bool
}

func (v gpusValue) String() string {
	if v.a == nil || !v.a.set {
		return ""
	}
	return fmt.Sprint(v.a.count)
}

func (v gpusValue) Set(s string) error {
	g, err := slurmfmt.ParseGPUs(s)
	if err != nil {
		return err
	}
	name := "--gpus-per-task "
	if v.perJob {
		name = "--gpus "
	}
	*v.a = gpuAsk{flag: name + s, typ: g.Type, count: g.Count, perJob: v.perJob, set: true}
	return nil
}

type gresValue struct{ a *gpuAsk }

func (v gresValue) String() string { return "" }

func (v gresValue) Set(s string) error {
	g, err := slurmfmt.ParseGres(s)
	if err != nil {
		return err
	}
	*v.a = gpuAsk{flag: "--gres " + s, typ: g.Type, count: g.Count, perJob: true, set: true}
	return nil
}

// apply sets the request's per-task demand: whole GPUs, or a MIG slice
// when the type is a MIG profile (gpu:1g.10gb:1).
func (a gpuAsk) apply(req *api.JobRequest) error {
	if !a.set {
		return nil
	}
	n := a.count
	if tasks := max(req.Tasks, 1); a.perJob && tasks > 1 {
		if n%tasks != 0 {
			return fmt.Errorf("%s for %d tasks: each task gets its own GPUs; give a multiple of the tasks, or --gpus-per-task", a.flag, tasks)
		}
		n /= tasks
	}
	if api.ValidMIG(a.typ) {
		if n != 1 {
			return fmt.Errorf("%s: a task gets one MIG slice, not %d", a.flag, n)
		}
		req.GPUs, req.MIG = 0, a.typ
		return nil
	}
	req.GPUs = n
	return nil
}

// checkType refuses a GPU type the server does not have: its GPUs are
// of one model (h100 matches H100-80GB).
func (a gpuAsk) checkType(ctx context.Context, c *client.Client) error {
	if a.typ == "" || api.ValidMIG(a.typ) {
		return nil
	}
	gpus, err := c.GPUs(ctx)
	if err != nil {
		return fmt.Errorf("%s: read the server's GPUs: %w", a.flag, err)
	}
	var models []string
	for _, g := range gpus {
		if strings.HasPrefix(strings.ToLower(g.Model), strings.ToLower(a.typ)) {
			return nil
		}
		if len(models) == 0 || models[len(models)-1] != g.Model {
			models = append(models, g.Model)
		}
	}
	return fmt.Errorf("%s: this server's GPUs are %s", a.flag, strings.Join(models, ", "))
}

// exportEnv is the environment sent with the job under --export (sbatch's
// rule; ALL by default), without values too long for the API, which are
// named on stderr.
func exportEnv(rule string, environ []string, stderr io.Writer) ([]string, error) {
	env, err := slurmfmt.Export(rule, environ)
	if err != nil {
		return nil, fmt.Errorf("--export: %w", err)
	}
	kept := env[:0]
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); len(v) > api.MaxArgBytes {
			fmt.Fprintf(stderr, "corral submit: not sending %s: its value is over %d bytes\n", k, api.MaxArgBytes)
			continue
		}
		kept = append(kept, kv)
	}
	return kept, nil
}

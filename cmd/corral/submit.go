package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
)

const submitUsage = `Usage: corral submit [flags] COMMAND [ARGS...]
       corral submit [flags] -f JOB.yaml

Queues a job on a corral server, like sbatch. The job waits until its GPUs
are free (see 'corral queue' and 'corral explain JOB'), then runs as a real
process that sees only its GPUs in CUDA_VISIBLE_DEVICES.

Ask for one kind of GPU per task (a job without any is refused unless
you ask for it with --gpus 0):
  -G, --gpus N       N whole GPUs per task (Slurm's --gpus-per-task; TYPE:N
                     checks the server's model, h100:2)
  --gres gpu:N       N GPUs for the whole job, shared out among its tasks
                     (gpu:TYPE:N; gpu:1g.10gb:1 is a MIG slice)
  --mig 1g.10gb      one MIG slice (on a machine in MIG mode)
  --share 0.25       a time-sliced fraction of one GPU
-n/--tasks N starts a gang of N tasks together, each with its own GPUs and
the variables torchrun sets (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT).

Slurm's habits work: -J name, -t 90 (minutes), -t 1-12:00:00, -t 2h,
--mem 16G (a bare number is MiB), -c cores, -D dir, and glued short flags
(-n4). The job gets your environment, as sbatch's --export=ALL, except
CORRAL_* (your token), SLURM_*, the device and rank variables corral sets
per task, PWD, OLDPWD, SHLVL and _; --export=NONE sends none,
--export=VAR1,VAR2=val only these, --export=ALL,VAR=val everything and
these (a variable named there is sent even if it is held back by default).

A job file holds the same fields in YAML (flags given on the command line
win):
  name: train
  command: [torchrun, train.py, --epochs, "3"]
  gpus: 2
  tasks: 4
  time: 2h
  priority: 10
  grace: 60s

Examples:
  corral submit -G 1 -- python -c 'import torch; print(torch.cuda.device_count())'
  corral submit --gpus 2 -n 4 -t 2:00:00 -J pretrain torchrun train.py
  corral submit --gres gpu:8 -n 8 --mem 64G torchrun train.py
  corral submit --share 0.25 --priority -1 --export=NONE jupyter lab
  corral submit -f train.yaml
` + clientHelp + `
Flags:
`

// submitFlags are submit's flags beside the request's own fields.
type submitFlags struct {
	file, export string
	gpus, gres   gpuAsk
	env          multiFlag
	json         bool
}

func runSubmit(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("submit", stderr)
	var r api.JobRequest
	var sf submitFlags
	defineSubmitFlags(fs, &r, &sf)
	if err := parseLeadingFlags(fs, submitUsage, args); err != nil {
		return err
	}
	req, err := buildRequest(fs, r, &sf, os.Environ(), stderr)
	if err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(30 * time.Second)
	defer cancel()
	for _, a := range []gpuAsk{sf.gpus, sf.gres} {
		if err := a.checkType(ctx, c); err != nil {
			return err
		}
	}
	j, err := c.Submit(ctx, req)
	if err != nil {
		return err
	}
	if sf.json {
		return json.NewEncoder(stdout).Encode(j)
	}
	fmt.Fprintf(stdout, "Submitted job %s\n", j.ID)
	return nil
}

func defineSubmitFlags(fs *flag.FlagSet, r *api.JobRequest, sf *submitFlags) {
	fs.StringVar(&sf.file, "f", "", "read the job from this YAML `file`")
	fs.StringVar(&r.Name, "name", "", "job `name` (letters, digits, '.', '_', '-')")
	alias(fs, "name", "J", "job-name")
	fs.Var(gpusValue{&sf.gpus}, "gpus", "whole `GPUs` per task, or TYPE:N (0: a job without GPUs)")
	alias(fs, "gpus", "G", "gpus-per-task")
	fs.Var(gresValue{&sf.gres}, "gres", "`gpu:N` or gpu:TYPE:N GPUs for the whole job, shared out among its tasks")
	fs.StringVar(&r.MIG, "mig", "", "a MIG `profile` per task, such as 1g.10gb")
	fs.Float64Var(&r.Share, "share", 0, "a `fraction` of one GPU per task, such as 0.25")
	fs.Float64Var(&r.CPU, "cpu", 0, "CPU `cores` per task")
	alias(fs, "cpu", "c", "cpus-per-task")
	fs.Var(memValue{&r.MemoryMiB}, "mem", "`memory` per task: MiB, or with a unit K, M, G, T (16G)")
	fs.IntVar(&r.Tasks, "tasks", 0, "tasks in the gang (default 1)")
	alias(fs, "tasks", "n", "ntasks")
	fs.Var(timeValue{&r.Time}, "time", "time `limit`: minutes (90), H:M:S, D-H:M:S, or 90m, 2h, 1d")
	alias(fs, "time", "t")
	fs.IntVar(&r.Priority, "priority", 0, "priority; higher runs first and may preempt lower")
	fs.StringVar(&r.Queue, "queue", "", "queue `name`")
	fs.StringVar(&r.Image, "image", "", "run the command in a container of this `image` (the server needs --container-runtime)")
	fs.StringVar(&r.CheckpointEvery, "checkpoint-every", "", "how often the job checkpoints, such as 30m")
	fs.StringVar(&r.Grace, "grace", "", "SIGTERM to SIGKILL delay when the job is stopped (default 10s)")
	fs.StringVar(&r.WorkDir, "workdir", "", "working `directory` (absolute; default the current one)")
	alias(fs, "workdir", "D", "chdir")
	fs.BoolVar(&r.Requeue, "requeue", false, "requeue the job if it is lost across a server restart")
	fs.StringVar(&sf.export, "export", "ALL", "the environment sent with the job, as sbatch: ALL, NONE, VAR1,VAR2=val or ALL,VAR=val")
	fs.Var(&sf.env, "env", "`KEY=VALUE` for the job's environment (repeatable)")
	fs.BoolVar(&sf.json, "json", false, "print the submitted job as JSON")
}

// buildRequest merges the job file, when given, with the flags set on
// the command line, the command after the flags and the exported
// environment, and validates the result.
func buildRequest(fs *flag.FlagSet, flags api.JobRequest, sf *submitFlags, environ []string, stderr io.Writer) (api.JobRequest, error) {
	req := flags
	var data []byte
	if sf.file != "" {
		var err error
		if data, err = os.ReadFile(sf.file); err != nil {
			return req, err
		}
		if req, err = api.ParseJobFile(data); err != nil {
			return req, fmt.Errorf("%s: %w", sf.file, err)
		}
		overrideSet(fs, &req, flags)
	}
	if fs.NArg() > 0 {
		req.Command = fs.Args()
	}
	if len(req.Command) == 0 {
		return req, errors.New("no command: give one after the flags, or a job file with -f (see corral submit -h)")
	}
	if err := gpuDemand(fs, &req, sf, data); err != nil {
		return req, err
	}
	exported, err := exportEnv(sf.export, environ, stderr)
	if err != nil {
		return req, err
	}
	req.Env = append(append(exported, req.Env...), sf.env...)
	if len(req.Env) > api.MaxEnv {
		return req, fmt.Errorf("--export: %d variables, the server takes at most %d; send fewer with --export=VAR1,VAR2 or --export=NONE", len(req.Env), api.MaxEnv)
	}
	if req.WorkDir == "" {
		if wd, err := os.Getwd(); err == nil {
			req.WorkDir = wd
		}
	}
	if err := checkSetFlags(fs, req); err != nil {
		return req, err
	}
	_, err = req.Validate()
	return req, err
}

// gpuDemand applies --gpus or --gres, and refuses a job that asks for no
// GPU at all unless the user said so (--gpus 0, gpus: 0 in the file):
// a GPU scheduler should not quietly run a job without one.
func gpuDemand(fs *flag.FlagSet, req *api.JobRequest, sf *submitFlags, file []byte) error {
	if sf.gpus.set && sf.gres.set {
		return errors.New("give one of -G/--gpus and --gres")
	}
	for _, a := range []gpuAsk{sf.gpus, sf.gres} {
		if err := a.apply(req); err != nil {
			return err
		}
	}
	if sf.gpus.set || sf.gres.set || isSet(fs, "mig", "share") || api.JobFileSets(file, "gpus", "mig", "share") {
		return nil
	}
	return errors.New("no GPUs asked for: give -G/--gpus N, --gres gpu:N, --mig PROFILE or --share F; --gpus 0 runs the job without GPUs")
}

// checkSetFlags refuses flags set to a zero that means nothing: -n 0,
// --share 0 (the API refuses them in a request too).
func checkSetFlags(fs *flag.FlagSet, req api.JobRequest) error {
	switch {
	case isSet(fs, "tasks") && req.Tasks == 0:
		return fmt.Errorf("-n/--tasks 0: want 1..%d", api.MaxTasks)
	case isSet(fs, "share") && req.Share == 0:
		return errors.New("--share 0: want a fraction above 0 and below 1; -G 0 asks for no GPU")
	}
	return nil
}

// isSet reports whether any of the flags (by canonical name) was given.
func isSet(fs *flag.FlagSet, names ...string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) {
		for _, n := range names {
			found = found || canonical(f) == n
		}
	})
	return found
}

// overrideSet copies into req the fields whose flags were given.
func overrideSet(fs *flag.FlagSet, req *api.JobRequest, flags api.JobRequest) {
	fs.Visit(func(f *flag.Flag) {
		switch canonical(f) {
		case "name":
			req.Name = flags.Name
		case "mig":
			req.MIG = flags.MIG
		case "share":
			req.Share = flags.Share
		case "cpu":
			req.CPU = flags.CPU
		case "mem":
			req.MemoryMiB = flags.MemoryMiB
		case "tasks":
			req.Tasks = flags.Tasks
		case "time":
			req.Time = flags.Time
		case "priority":
			req.Priority = flags.Priority
		case "queue":
			req.Queue = flags.Queue
		case "image":
			req.Image = flags.Image
		case "checkpoint-every":
			req.CheckpointEvery = flags.CheckpointEvery
		case "grace":
			req.Grace = flags.Grace
		case "workdir":
			req.WorkDir = flags.WorkDir
		case "requeue":
			req.Requeue = flags.Requeue
		}
	})
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

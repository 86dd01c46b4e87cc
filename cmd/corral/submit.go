package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
)

const submitUsage = `Usage: corral submit [flags] COMMAND [ARGS...]
       corral submit [flags] -f JOB.yaml

Queues a job on a corral server, like sbatch. The job waits until its GPUs
are free (see 'corral queue' and 'corral explain JOB'), then runs as a real
process that sees only its GPUs in CUDA_VISIBLE_DEVICES.

Ask for one kind of GPU per task:
  --gpus N        N whole GPUs
  --mig 1g.10gb   one MIG slice (on a machine in MIG mode)
  --share 0.25    a time-sliced fraction of one GPU
--tasks N starts a gang of N tasks together, each with its own GPUs and the
variables torchrun sets (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT).

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
  corral submit --gpus 1 -- python -c 'import torch; print(torch.cuda.device_count())'
  corral submit --gpus 2 --tasks 4 --time 2h --name pretrain torchrun train.py
  corral submit --share 0.25 --priority -1 jupyter lab
  corral submit -f train.yaml
` + clientHelp + `
Flags:
`

func runSubmit(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("submit", stderr)
	file := fs.String("f", "", "read the job from this YAML `file`")
	var r api.JobRequest
	fs.StringVar(&r.Name, "name", "", "job `name` (letters, digits, '.', '_', '-')")
	fs.IntVar(&r.GPUs, "gpus", 0, "whole GPUs per task")
	fs.StringVar(&r.MIG, "mig", "", "a MIG `profile` per task, such as 1g.10gb")
	fs.Float64Var(&r.Share, "share", 0, "a `fraction` of one GPU per task, such as 0.25")
	fs.Float64Var(&r.CPU, "cpu", 0, "CPU `cores` per task")
	mem := fs.String("mem", "", "memory per task, such as 16GiB or 512MiB")
	fs.IntVar(&r.Tasks, "tasks", 0, "tasks in the gang (default 1)")
	fs.StringVar(&r.Time, "time", "", "time limit, such as 90m or 2h")
	fs.IntVar(&r.Priority, "priority", 0, "priority; higher runs first and may preempt lower")
	fs.StringVar(&r.Queue, "queue", "", "queue `name`")
	fs.StringVar(&r.Image, "image", "", "run the command in a container of this `image` (the server needs --container-runtime)")
	fs.StringVar(&r.CheckpointEvery, "checkpoint-every", "", "how often the job checkpoints, such as 30m")
	fs.StringVar(&r.Grace, "grace", "", "SIGTERM to SIGKILL delay when the job is stopped (default 10s)")
	fs.StringVar(&r.WorkDir, "workdir", "", "working `directory` (absolute; default the current one)")
	fs.BoolVar(&r.Requeue, "requeue", false, "requeue the job if it is lost across a server restart")
	var env multiFlag
	fs.Var(&env, "env", "`KEY=VALUE` for the job's environment (repeatable)")
	asJSON := fs.Bool("json", false, "print the submitted job as JSON")
	if err := parseFlags(fs, submitUsage, args); err != nil {
		return err
	}
	req, err := buildRequest(fs, r, *file, *mem, env)
	if err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(30 * time.Second)
	defer cancel()
	j, err := c.Submit(ctx, req)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(j)
	}
	fmt.Fprintf(stdout, "Submitted job %s\n", j.ID)
	return nil
}

// buildRequest merges the job file, when given, with the flags set on
// the command line and the command after the flags.
func buildRequest(fs *flag.FlagSet, flags api.JobRequest, file, mem string, env []string) (api.JobRequest, error) {
	req := flags
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return req, err
		}
		if req, err = api.ParseJobFile(data); err != nil {
			return req, fmt.Errorf("%s: %w", file, err)
		}
		overrideSet(fs, &req, flags)
	}
	if fs.NArg() > 0 {
		req.Command = fs.Args()
	}
	if len(req.Command) == 0 {
		return req, fmt.Errorf("no command: give one after the flags, or a job file with -f (see corral submit -h)")
	}
	if mem != "" {
		mib, err := parseMiB(mem)
		if err != nil {
			return req, err
		}
		req.MemoryMiB = mib
	}
	req.Env = append(req.Env, env...)
	if req.WorkDir == "" {
		if wd, err := os.Getwd(); err == nil {
			req.WorkDir = wd
		}
	}
	_, err := req.Validate()
	return req, err
}

// overrideSet copies into req the fields whose flags were given.
func overrideSet(fs *flag.FlagSet, req *api.JobRequest, flags api.JobRequest) {
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "name":
			req.Name = flags.Name
		case "gpus":
			req.GPUs = flags.GPUs
		case "mig":
			req.MIG = flags.MIG
		case "share":
			req.Share = flags.Share
		case "cpu":
			req.CPU = flags.CPU
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

// parseMiB reads a memory size: a number of MiB, or with a unit (K, M, G,
// T, with or without "i" and "B").
func parseMiB(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := 1.0
	switch {
	case strings.HasSuffix(t, "K"):
		mult, t = 1.0/1024, t[:len(t)-1]
	case strings.HasSuffix(t, "M"):
		t = t[:len(t)-1]
	case strings.HasSuffix(t, "G"):
		mult, t = 1024, t[:len(t)-1]
	case strings.HasSuffix(t, "T"):
		mult, t = 1024*1024, t[:len(t)-1]
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("memory %q: want a size such as 512MiB, 16GiB or 16G", s)
	}
	return int64(v*mult + 0.5), nil
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

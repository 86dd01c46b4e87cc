package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/slurmfmt"
)

const submitUsage = `Usage: corral submit [flags] COMMAND [ARGS...]
       corral submit [flags] SCRIPT [ARGS...]
       corral submit [flags] -f JOB.yaml

Queues a job on a corral server, like sbatch. The job waits until its GPUs
are free (see 'corral queue' and 'corral explain JOB'), then runs as a real
process that sees only its GPUs in CUDA_VISIBLE_DEVICES.

A SCRIPT is a file whose first line starts with #!: its #SBATCH lines,
before its first command, are read as sbatch reads them (flags given on
the command line win), and the job runs the copy taken now, as sbatch
runs its copy. Directives that mean nothing on one machine (--partition,
--account, --exclusive, ...) are named on stderr with their line and
ignored; those corral cannot honour (--nodes=2, --uid) are refused.
'corral sbatch' takes only scripts (or --wrap) and answers as sbatch.

Ask for GPUs as Slurm does (a job without any is refused unless you ask
for it with --gpus 0):
  -G, --gpus N          N GPUs for the whole job, shared out among its
                        tasks (TYPE:N checks the server's model, h100:2)
  --gpus-per-task N     N whole GPUs per task
  --gres gpu:N          the same as --gpus N (gpu:TYPE:N; gpu:1g.10gb:1 is
                        a MIG slice)
  --mig 1g.10gb         one MIG slice per task (on a machine in MIG mode)
  --share 0.25          a time-sliced fraction of one GPU per task
-n/--tasks N starts a gang of N tasks together, each with its own GPUs and
the variables torchrun sets (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT) and srun sets (SLURM_PROCID, SLURM_NTASKS, ...).

Slurm's habits work: -J name, -t 90 (minutes), -t 1-12:00:00, -t 2h,
--mem 16G for the job (a bare number is MiB; --mem-per-cpu, --mem-per-gpu),
-c cores per task, -D dir, -o/-e files (%j %x %A %a %u), --array 0-99%10,
-d afterok:ID, -H (held), --begin now+1hour, --nice, --signal USR1@120,
--wrap 'cmd', --parsable, -W (wait for the end), and glued short flags
(-n4). The job gets your environment, as sbatch's --export=ALL, except
CORRAL_* (your token), SLURM_*, the device and rank variables corral sets
per task, PWD, OLDPWD, SHLVL and _; --export=NONE sends none,
--export=VAR1,VAR2=val only these, --export=ALL,VAR=val everything and
these. It gets your umask and SLURM_SUBMIT_DIR, the directory you are in.

A job file holds the same fields in YAML (flags given on the command line
win):
  name: train
  command: [torchrun, train.py, --epochs, "3"]
  gpus: 2            # per task, the API's field
  tasks: 4
  time: 2h

Examples:
  corral submit -G 1 -- python -c 'import torch; print(torch.cuda.device_count())'
  corral submit train.sbatch --epochs 3
  corral submit --gpus 8 -n 4 -t 2:00:00 -J pretrain torchrun train.py
  corral submit --array 0-99%10 -G 1 -o 'sweep-%A_%a.out' python sweep.py
  corral submit -d afterok:j000017 -G 1 python eval.py
  corral submit -f train.yaml
` + clientHelp + `
Flags:
`

// submitFlags are submit's flags beside the request's own fields.
type submitFlags struct {
	file, export, begin, wrap string
	gpus, gpusPerTask, gres   gpuAsk
	mem, memPerCPU, memPerGPU int64 // MiB
	cpusPerGPU                float64
	nice                      int
	env                       multiFlag
	json, parsable, wait      bool
	noRequeue                 bool
	notes                     []string // what was ignored, said on stderr
	sbatch                    bool     // run as corral sbatch
}

func runSubmit(args []string, stdout, stderr io.Writer) error {
	return submitMain("submit", args, stdout, stderr)
}

func runSbatch(args []string, stdout, stderr io.Writer) error {
	return submitMain("sbatch", args, stdout, stderr)
}

// submitMain is corral submit, and corral sbatch when name says so.
func submitMain(name string, args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet(name, stderr)
	var r api.JobRequest
	sf := submitFlags{sbatch: name == "sbatch"}
	defineSubmitFlags(fs, &r, &sf)
	usage := submitUsage
	if sf.sbatch {
		usage = sbatchUsage
	}
	if err := parseLeadingFlags(fs, usage, args); err != nil {
		return err
	}
	req, err := buildRequest(fs, &r, &sf, os.Environ(), stderr)
	if err != nil {
		return err
	}
	for _, n := range sf.notes {
		fmt.Fprintf(stderr, "corral %s: %s\n", name, n)
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(30 * time.Second)
	defer cancel()
	for _, a := range []gpuAsk{sf.gpus, sf.gpusPerTask, sf.gres} {
		if err := a.checkType(ctx, c); err != nil {
			return err
		}
	}
	j, err := c.Submit(ctx, req)
	if err != nil {
		return err
	}
	switch {
	case sf.json:
		if err := json.NewEncoder(stdout).Encode(j); err != nil {
			return err
		}
	case sf.parsable:
		fmt.Fprintln(stdout, j.ID)
	default:
		fmt.Fprintln(stdout, submitted(j, sf.sbatch))
	}
	if sf.wait {
		return waitForJobs(c, j, stderr)
	}
	return nil
}

// submitted is the line that says a job was queued.
func submitted(j api.Job, sbatch bool) string {
	line := "Submitted job " + j.ID
	if sbatch {
		line = "Submitted batch job " + j.ID
	}
	if j.ArrayTasks > 0 {
		line += fmt.Sprintf(" (an array of %d tasks, %s_%d to %s_%d)", j.ArrayTasks, j.ID, *j.ArrayIndex, j.ID, lastIndex(j))
	}
	return line
}

// lastIndex is the highest index of the array j is the first task of.
func lastIndex(j api.Job) int {
	a, err := slurmfmt.ParseArrayUpTo(j.Request.Array, slurmfmt.CeilingArrayTasks)
	if err != nil || len(a.Indices) == 0 {
		return *j.ArrayIndex
	}
	return a.Indices[len(a.Indices)-1]
}

// buildRequest merges the job file or the batch script, when given,
// with the flags set on the command line, the command after the flags
// and the exported environment, and validates the result.
func buildRequest(fs *flag.FlagSet, flags *api.JobRequest, sf *submitFlags, environ []string, stderr io.Writer) (api.JobRequest, error) {
	req := *flags
	var data []byte
	if sf.file != "" {
		var err error
		if data, err = os.ReadFile(sf.file); err != nil {
			return req, err
		}
		if req, err = api.ParseJobFile(data); err != nil {
			return req, fmt.Errorf("%s: %w", sf.file, err)
		}
		overrideSet(fs, &req, *flags)
	}
	if err := commandOf(fs, &req, sf, flags); err != nil {
		return req, err
	}
	if len(req.Command) == 0 {
		return req, errors.New("no command: give one after the flags, a batch script, or a job file with -f (see corral submit -h)")
	}
	if err := gpuDemand(fs, &req, sf, data); err != nil {
		return req, err
	}
	if err := environment(&req, sf, environ, stderr); err != nil {
		return req, err
	}
	if err := slurmHabits(fs, &req, sf); err != nil {
		return req, err
	}
	if sf.sbatch && req.Output == "" && req.Error == "" {
		req.Output = "slurm-%j.out" // sbatch's default, in the work directory
		if req.Array != "" {
			req.Output = "slurm-%A_%a.out"
		}
	}
	if err := checkSetFlags(fs, req); err != nil {
		return req, err
	}
	_, err := req.Validate()
	return req, err
}

// commandOf sets the request's command: --wrap's, a batch script's (its
// #SBATCH lines read into the flags not given), or the one given.
func commandOf(fs *flag.FlagSet, req *api.JobRequest, sf *submitFlags, flags *api.JobRequest) error {
	switch {
	case (sf.wrap != "" || fs.NArg() > 0 && isScript(fs.Arg(0))) && sf.file != "":
		return errors.New("-f and a batch script: give one")
	case sf.wrap != "" && fs.NArg() > 0:
		return fmt.Errorf("--wrap and a command %q: give one", fs.Arg(0))
	case sf.wrap != "":
		req.Script, req.Command = "#!/bin/sh\n"+sf.wrap+"\n", []string{"wrap"}
		return nil
	case fs.NArg() > 0 && isScript(fs.Arg(0)):
		body, err := readScript(fs, fs.Arg(0), sf)
		if err != nil {
			return err
		}
		*req = *flags // with the directives the command line did not override
		req.Script, req.Command = string(body), append([]string{filepath.Base(fs.Arg(0))}, fs.Args()[1:]...)
		return nil
	case sf.sbatch:
		return errors.New("give a batch script (a file whose first line starts with #!) or --wrap 'command'; corral submit takes a command")
	case fs.NArg() > 0:
		req.Command = fs.Args()
	}
	return nil
}

// isScript reports whether path is a file that starts with "#!".
func isScript(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	head := make([]byte, 2)
	n, _ := io.ReadFull(f, head)
	return n == 2 && string(head) == "#!"
}

// environment sets what the job gets of the client's environment: the
// exported variables, the umask and the directories.
func environment(req *api.JobRequest, sf *submitFlags, environ []string, stderr io.Writer) error {
	exported, err := exportEnv(sf.export, environ, stderr)
	if err != nil {
		return err
	}
	req.Env = append(append(exported, req.Env...), sf.env...)
	if len(req.Env) > api.MaxEnv {
		return fmt.Errorf("--export: %d variables, the server takes at most %d; send fewer with --export=VAR1,VAR2 or --export=NONE", len(req.Env), api.MaxEnv)
	}
	wd, _ := os.Getwd()
	if req.WorkDir == "" {
		req.WorkDir = wd
	}
	if req.SubmitDir == "" {
		req.SubmitDir = wd
	}
	if req.Umask == "" {
		req.Umask = ownUmask()
	}
	return nil
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
		case "gpu-mem":
			req.GPUMemoryMiB = flags.GPUMemoryMiB
		case "gpu-mem-per-gpu":
			req.GPUMemoryPerGPUMiB = flags.GPUMemoryPerGPUMiB
		case "gpu-model":
			req.GPUModels = flags.GPUModels
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
		overrideBatch(canonical(f), req, flags)
	})
}

// overrideBatch copies the sbatch fields whose flags were given.
func overrideBatch(name string, req *api.JobRequest, flags api.JobRequest) {
	switch name {
	case "array":
		req.Array = flags.Array
	case "dependency":
		req.Dependency = flags.Dependency
	case "kill-on-invalid-dep":
		req.KillOnInvalidDep = flags.KillOnInvalidDep
	case "hold":
		req.Hold = flags.Hold
	case "output":
		req.Output = flags.Output
	case "error":
		req.Error = flags.Error
	case "open-mode":
		req.OpenMode = flags.OpenMode
	case "signal":
		req.Signal = flags.Signal
	}
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

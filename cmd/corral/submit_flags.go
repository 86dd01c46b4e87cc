package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/slurmfmt"
)

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

// memValue is --mem: MiB, or a size with Slurm's units.
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

// gpuAsk is a GPU request as Slurm users write it: --gpus [TYPE:]N per
// task, or --gres gpu[:TYPE][:N] for the whole job, which runs on this one
// machine (Slurm's --gres counts per node).
type gpuAsk struct {
	flag   string
	typ    string
	count  int
	perJob bool
	set    bool
}

type gpusValue struct{ a *gpuAsk }

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
	*v.a = gpuAsk{flag: "--gpus " + s, typ: g.Type, count: g.Count, set: true}
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
			return fmt.Errorf("%s for %d tasks: each task gets its own GPUs; give a multiple of the tasks, or -G per task", a.flag, tasks)
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

package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/server"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/slurmfmt"
)

// serverLimits are the limits the admin sets for every job of the
// server: no tenant can lift them.
type serverLimits struct {
	maxGrace  time.Duration
	defMem    string
	defCPUs   float64
	pidsMax   int64
	maxOutput string
	minFree   string
	maxArray  int
}

func (l *serverLimits) register(fs *flag.FlagSet) {
	fs.DurationVar(&l.maxGrace, "max-grace", server.DefaultMaxGrace,
		"the longest grace period any job gets between SIGTERM and the SIGKILL of its whole cgroup, on a cancel, a preemption or its time limit (Slurm's KillWait); a longer --grace is lowered to it")
	fs.StringVar(&l.defMem, "def-mem-per-gpu", "", "memory a task that asks for none gets per GPU, as --mem takes it (Slurm's DefMemPerGPU; a share its fraction, a CPU-only task one GPU's worth; empty: the machine's memory over its GPUs)")
	fs.Float64Var(&l.defCPUs, "def-cpus-per-gpu", 0, "CPU cores a task that asks for none gets per GPU (Slurm's DefCpuPerGPU; 0: the machine's CPUs over its GPUs)")
	fs.Int64Var(&l.pidsMax, "pids-max", server.DefaultPidsMax, "the most processes and threads one task may have at once (-1: no cap)")
	fs.StringVar(&l.maxOutput, "max-output", "1G", "the most each task's stdout and stderr may hold, as --mem takes sizes (what it writes beyond is dropped, the log ending with a marker; 0: no cap)")
	fs.IntVar(&l.maxArray, "max-array-size", slurmfmt.MaxArrayTasks, fmt.Sprintf("the most tasks one job array may have (Slurm's MaxArraySize), at most %d", slurmfmt.CeilingArrayTasks))
	fs.StringVar(&l.minFree, "min-free", "64M", "the room kept free on the database's and the state directory's disks: below it, submissions are refused (HTTP 507) until space is freed (0: none)")
}

// bytesFlag reads a size flag in Slurm's units (1G, 512M); "0" is none
// (-1).
func bytesFlag(name, v string) (int64, error) {
	if v == "0" || v == "" {
		return -1, nil
	}
	m, err := slurmfmt.ParseMem(v)
	if err != nil {
		return 0, fmt.Errorf("--%s %q: %w", name, v, err)
	}
	return m << 20, nil
}

func (l serverLimits) apply(cfg *server.Config) error {
	cfg.MaxGrace, cfg.PidsMax = l.maxGrace, l.pidsMax
	if l.maxArray < 1 || l.maxArray > slurmfmt.CeilingArrayTasks {
		return fmt.Errorf("--max-array-size %d: want 1 to %d", l.maxArray, slurmfmt.CeilingArrayTasks)
	}
	cfg.MaxArrayTasks = l.maxArray
	var err error
	if cfg.MaxOutputBytes, err = bytesFlag("max-output", l.maxOutput); err != nil {
		return err
	}
	if cfg.MinFreeBytes, err = bytesFlag("min-free", l.minFree); err != nil {
		return err
	}
	cfg.DefCPUPerGPUMilli = int64(l.defCPUs * 1000)
	if l.defMem != "" {
		m, err := slurmfmt.ParseMem(l.defMem)
		if err != nil {
			return fmt.Errorf("--def-mem-per-gpu %q: %w", l.defMem, err)
		}
		cfg.DefMemPerGPUMiB = m
	}
	if l.defCPUs < 0 || l.maxGrace < 0 {
		return errors.New("--def-cpus-per-gpu and --max-grace take 0 or more")
	}
	return nil
}

// tenantLimits are a tenant's own limits, as the flags of corral server
// tenant give them.
type tenantLimits struct {
	maxGrace string
	defMem   string
	defCPUs  float64
	maxPrio  int
	budget   string
	disk     string
}

// tenantLimitFlags are the flags of tenantLimits, as set names them.
var tenantLimitFlags = []string{"--max-grace", "--def-mem-per-gpu", "--def-cpus-per-gpu", "--max-priority", "--budget", "--disk"}

func (l *tenantLimits) register(fs *flag.FlagSet) {
	fs.StringVar(&l.maxGrace, "max-grace", "", "the longest grace period the tenant's jobs get (30s; empty or 0s: the server's --max-grace)")
	fs.StringVar(&l.defMem, "def-mem-per-gpu", "", "memory a task of the tenant that asks for none gets per GPU, as --mem takes it (empty or 0: the server's)")
	fs.Float64Var(&l.defCPUs, "def-cpus-per-gpu", 0, "CPU cores a task of the tenant that asks for none gets per GPU (0: the server's)")
	fs.StringVar(&l.budget, "budget", "", "GPUH/PERIOD or $USD/PERIOD: the GPU-hours the tenant's jobs may use per period, or their cost in dollars at the server's --gpu-price; PERIOD a duration (720h) or month (calendar month, UTC); a job that would overrun it waits, nothing running is stopped (empty: none)")
	fs.StringVar(&l.disk, "disk", "", "the most the tenant's jobs keep in the server's state directory (logs, and work directories of jobs without --workdir), as --mem takes sizes (10G): each log is cut at it, and the oldest ended jobs' files are removed beyond it, the newest's always kept (empty or 0: none)")
	fs.IntVar(&l.maxPrio, "max-priority", 0, "the highest --priority the tenant's jobs may ask for (a higher one is refused); priority orders the tenant's own jobs and never stops another tenant's")
}

// mibFlag reads a size flag in Slurm's memory units (512M, 10G) as MiB;
// empty or 0 is none (0).
func mibFlag(name, v string) (int64, error) {
	if v == "" || v == "0" {
		return 0, nil
	}
	m, err := slurmfmt.ParseMem(v)
	if err != nil {
		return 0, fmt.Errorf("--%s %q: %w", name, v, err)
	}
	return m, nil
}

// memMiB is --def-mem-per-gpu in MiB.
func (l tenantLimits) memMiB() (int64, error) { return mibFlag("def-mem-per-gpu", l.defMem) }

// diskMiB is --disk in MiB.
func (l tenantLimits) diskMiB() (int64, error) { return mibFlag("disk", l.disk) }

func (l tenantLimits) create(req *api.TenantRequest) error {
	mem, err := l.memMiB()
	req.MaxGrace, req.DefMemPerGPUMiB, req.DefCPUsPerGPU, req.MaxPriority = l.maxGrace, mem, l.defCPUs, l.maxPrio
	req.Budget = l.budget
	disk, derr := l.diskMiB()
	req.DiskMiB = disk
	return errors.Join(err, derr)
}

// update sets in u what the flag name, given to set, changes.
func (l tenantLimits) update(name string, u *api.TenantUpdate) {
	switch name {
	case "max-grace":
		g := l.maxGrace
		u.MaxGrace = &g
	case "def-mem-per-gpu":
		m, _ := l.memMiB() // checked by create's caller first
		u.DefMemPerGPUMiB = &m
	case "def-cpus-per-gpu":
		c := l.defCPUs
		u.DefCPUsPerGPU = &c
	case "max-priority":
		p := l.maxPrio
		u.MaxPriority = &p
	case "budget":
		b := l.budget
		u.Budget = &b
	case "disk":
		d, _ := l.diskMiB() // checked by create's caller first
		u.DiskMiB = &d
	}
}

func (tenantLimits) names() string { return strings.Join(tenantLimitFlags, ", ") }

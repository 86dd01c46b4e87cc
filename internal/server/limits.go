package server

import (
	"cmp"
	"fmt"
	"net/http"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// DefaultMaxGrace is the default of Config.MaxGrace: how long a stopped
// job may take to exit after SIGTERM before its whole cgroup is killed.
const DefaultMaxGrace = 30 * time.Second

// DefaultPidsMax is the default of Config.PidsMax.
const DefaultPidsMax = 4096

// specFor is specOf, then the request brought within the limits the
// admin set for the server and for who: what was lowered or set is said
// in the spec's Adjusted.
func (s *Server) specFor(req api.JobRequest, who store.Tenant) (store.Spec, error) {
	spec, err := s.specOf(req)
	if err != nil {
		return spec, err
	}
	if spec.Priority > who.MaxPriority {
		return spec, &httpError{http.StatusForbidden, fmt.Errorf("priority %d: tenant %s may ask for at most %d, which an admin sets "+
			"('corral server tenant set %s --max-priority N'); priority orders the tenant's own jobs and never stops another tenant's",
			spec.Priority, who.Name, who.MaxPriority, who.Name)}
	}
	s.capGrace(&spec, who)
	s.chargeDefaults(&spec, who)
	return spec, nil
}

// graceCap is the longest grace period the tenant's jobs may have.
func (s *Server) graceCap(t store.Tenant) time.Duration {
	if t.MaxGrace > 0 {
		return t.MaxGrace
	}
	return s.cfg.MaxGrace
}

// capGrace lowers a grace period above the tenant's cap to the cap.
func (s *Server) capGrace(spec *store.Spec, who store.Tenant) {
	if c := s.graceCap(who); spec.Grace > c {
		spec.Adjusted = append(spec.Adjusted, fmt.Sprintf("grace %v lowered to %v, the longest the admin allows tenant %s", spec.Grace, c, who.Name))
		spec.Grace = c
	}
}

// graceOf is the grace period j's tasks get: its own, within its
// tenant's cap as the server knows it now (a job submitted before the
// cap was lowered, or before there was one, gets no more). The caller
// holds s.mu, or runs before Run.
func (s *Server) graceOf(j *store.Job) time.Duration {
	return min(j.Spec.Grace, s.graceCap(s.tenants[j.Tenant]))
}

// defaults are the memory (MiB) and CPU (thousandths) a task of spec
// gets when it declares none: the tenant's default per GPU, else the
// server's, times the GPUs a task uses (a share or slice its fraction,
// a CPU-only task one GPU's worth); at most the machine's, and at most
// the tenant's quota spread over the job's tasks.
func (s *Server) defaults(spec store.Spec, t store.Tenant) (memMiB, cpuMilli int64) {
	node := s.full.Nodes[0]
	gpus := max(int64(len(s.gpus)), 1)
	memPer := cmp.Or(t.DefMemPerGPUMiB, s.cfg.DefMemPerGPUMiB, node.MemoryMiB/gpus)
	cpuPer := cmp.Or(t.DefCPUPerGPUMilli, s.cfg.DefCPUPerGPUMilli, node.CPUMilli/gpus)
	units := cmp.Or(s.taskGPUMilli(spec), 1000) // thousandths of a GPU per task
	tasks := int64(max(spec.Tasks, 1))
	memMiB = within(max(memPer*units/1000, 1), node.MemoryMiB/tasks, t.QuotaMemoryMiB/tasks)
	cpuMilli = within(max(cpuPer*units/1000, 10), node.CPUMilli/tasks, t.QuotaCPUMilli/tasks)
	return memMiB, cpuMilli
}

// taskGPUMilli is the thousandths of a GPU one task of spec uses, for
// its defaults: whole GPUs, a share, or a MIG instance's part of its
// GPU (a seventh where the model does not say); 0 for a CPU-only task.
func (s *Server) taskGPUMilli(spec store.Spec) int64 {
	switch {
	case spec.GPUs > 0:
		return int64(spec.GPUs) * 1000
	case spec.GPUMilli > 0:
		return int64(spec.GPUMilli)
	case spec.MIG != "" && s.model != nil && s.model.MIG:
		if m, err := s.model.ProfileMilli(spec.MIG); err == nil {
			return int64(m)
		}
	}
	if spec.MIG != "" {
		return 1000 / 7
	}
	return 0
}

// within is v lowered to each positive cap.
func within(v int64, caps ...int64) int64 {
	for _, c := range caps {
		if c > 0 && v > c {
			v = c
		}
	}
	return v
}

// chargeDefaults gives a job that declares no memory or CPU the
// defaults as its request when its tenant has a quota of that resource,
// so that the tenant's jobs together stay within it; other tenants'
// jobs get the defaults as their cgroups' limits at launch (taskLimits)
// without being charged them.
func (s *Server) chargeDefaults(spec *store.Spec, who store.Tenant) {
	mem, cpu := s.defaults(*spec, who)
	if spec.MemoryMiB == 0 {
		charged := ""
		if who.QuotaMemoryMiB > 0 {
			spec.MemoryMiB, charged = mem, ", charged to the tenant's memory quota"
		}
		spec.Adjusted = append(spec.Adjusted, fmt.Sprintf("no memory asked for: each task is limited to %s, the default%s", mibString(mem), charged))
	}
	if spec.CPUMilli == 0 {
		charged := ""
		if who.QuotaCPUMilli > 0 {
			spec.CPUMilli, charged = cpu, ", charged to the tenant's CPU quota"
		}
		spec.Adjusted = append(spec.Adjusted, fmt.Sprintf("no CPUs asked for: each task is limited to %s CPUs, the default%s", gpuString(int(cpu)), charged))
	}
}

// taskLimits are the memory (bytes), CPU (thousandths) and processes a
// task of j may use, its cgroup's limits: what it asked for, else the
// defaults. The caller holds s.mu, or runs before Run.
func (s *Server) taskLimits(j *store.Job) (memBytes, cpuMilli, pids int64) {
	mem, cpu := j.Spec.MemoryMiB, j.Spec.CPUMilli
	if mem == 0 || cpu == 0 {
		dm, dc := s.defaults(j.Spec, s.tenants[j.Tenant])
		mem, cpu = cmp.Or(mem, dm), cmp.Or(cpu, dc)
	}
	return mem << 20, cpu, max(s.cfg.PidsMax, 0)
}

package server

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/store"
)

// GPU is one GPU of the machine.
type GPU struct {
	Index     int    `json:"index"`
	UUID      string `json:"uuid,omitempty"`
	Model     string `json:"model"` // corral GPU catalog name
	MemoryMiB int64  `json:"memory_mib"`
	MIG       bool   `json:"mig"` // MIG mode is on
	// MIGInstances are the MIG instances that exist on the GPU (found
	// through NVML). A task placed on a MIG slice of a profile gets the UUID
	// of a free instance of that profile in CUDA_VISIBLE_DEVICES; without
	// one (declared GPUs) it gets the GPU index and CORRAL_MIG_PROFILE.
	MIGInstances []MIGInstance `json:"mig_instances,omitempty"`
}

// MIGInstance is one existing MIG instance of a GPU.
type MIGInstance struct {
	UUID    string `json:"uuid"`
	Profile string `json:"profile"`
}

// nodeName is the name of the machine in its one-node fleet.
const nodeName = "local"

// DefaultTimeSlices is how many shares each GPU offers when MIG is off.
const DefaultTimeSlices = 4

// buildFleet makes the one-node fleet of the machine's GPUs: dynamic MIG
// when the GPUs are in MIG mode, else time-slicing in cfg.TimeSlices
// shares; its CPU, memory and price per GPU-hour from cfg.
func buildFleet(gpus []GPU, cfg *Config) (*fleet.Fleet, *gpu.Model, error) {
	slices, cpuMilli, memMiB := cfg.TimeSlices, cfg.CPUMilli, cfg.MemoryMiB
	if len(gpus) == 0 {
		return nil, nil, errors.New("no GPUs")
	}
	model, err := gpu.Lookup(gpus[0].Model)
	if err != nil {
		return nil, nil, fmt.Errorf("GPU 0: %w", err)
	}
	mig := gpus[0].MIG
	for _, g := range gpus[1:] {
		m, err := gpu.Lookup(g.Model)
		if err != nil {
			return nil, nil, fmt.Errorf("GPU %d: %w", g.Index, err)
		}
		if m != model || g.MIG != mig {
			return nil, nil, fmt.Errorf("GPU %d is %s (MIG %v), GPU 0 is %s (MIG %v): one machine must have one GPU kind",
				g.Index, m.Name, g.MIG, model.Name, mig)
		}
	}
	if cpuMilli <= 0 {
		cpuMilli = int64(runtime.NumCPU()) * 1000
	}
	syn := fleet.Synthetic{Nodes: 1, GPUsPerNode: len(gpus), GPUModel: model.Name, CPUMilli: cpuMilli, MemoryMiB: memMiB}
	if mig {
		if !model.MIG {
			return nil, nil, fmt.Errorf("GPU model %s does not support MIG", model.Name)
		}
		syn.MIG = fleet.MIGDynamic
	}
	f, err := syn.Build()
	if err != nil {
		return nil, nil, err
	}
	f.Nodes[0].Name = nodeName
	f.Nodes[0].PricePerGPUHour = cfg.GPUPrice
	if !mig && slices > 1 {
		f.Nodes[0].TimeSlices = slices
	}
	return f, model, f.Validate()
}

// gangJob is a stored job as the scheduling core sees it. A job that
// asked by GPU memory carries its ask, and once the core chose its shape
// at submit (chooseShape), the shape and the GPUs of its model.
func gangJob(j *store.Job) *job.Job {
	out := plainJob(j)
	s := j.Spec
	if s.GPUMemoryMiB == 0 {
		return out
	}
	out.ByGPUMemory = &job.MemoryAsk{TotalMiB: s.GPUMemoryMiB, MinPerGPUMiB: s.GPUMemoryPerGPUMiB, Models: s.GPUModels}
	if out.Shape = chosenShape(s); out.Shape != nil {
		out.Groups[0].Task.Models = []string{s.ChosenModel}
		return out
	}
	out.Groups[0].Task.GPUs = 0 // the core picks
	return out
}

// chosenShape is the shape the core chose at submit for a job that asked
// by GPU memory; nil for another job.
func chosenShape(s store.Spec) *job.MemoryShape {
	if s.GPUMemoryMiB == 0 || s.ChosenModel == "" {
		return nil
	}
	shape := &job.MemoryShape{Model: s.ChosenModel, Tasks: max(s.Tasks, 1), GPUsPerTask: s.GPUs}
	if m, err := gpu.Lookup(s.ChosenModel); err == nil {
		shape.MemoryMiB = m.MemoryMiB
	}
	return shape
}

// plainJob is a stored job's GPUs, CPU and memory as the core sees them.
func plainJob(j *store.Job) *job.Job {
	s := j.Spec
	return &job.Job{
		Name:     j.Name(),
		Tenant:   j.Tenant,
		Queue:    s.Queue,
		Priority: s.Priority,
		Groups: []job.Group{{Name: "task", Count: max(s.Tasks, 1), Task: job.Demand{
			GPUs: s.GPUs, MIG: s.MIG, GPUMilli: s.GPUMilli, CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB,
		}}},
		Runtime:         s.TimeLimit,
		CheckpointEvery: s.CheckpointEvery,
	}
}

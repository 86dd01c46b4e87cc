package workload

import (
	"math"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

// Per-task CPU and memory of the default shapes: 12 cores and 128 GiB per
// training GPU (an 8-GPU task takes half of a fleet.Synthetic node's 192
// cores and 2 TiB), less for serving and notebooks.
const (
	gib            = 1024 // MiB
	trainCPUPerGPU = 12_000
	trainMemPerGPU = 128 * gib
)

// Default topology levels: those of fleet.Synthetic.
const (
	levelRack  = "rack"
	levelBlock = "block"
)

// DefaultShapes are the four generated classes:
//
//   - training: gangs of 2, 4, 8, 16, 32 or 64 tasks (weights 30, 25, 20,
//     12, 8, 5) of 8 GPUs each; lognormal durations, median 6 h, sigma 1.2,
//     clamped to [30 min, 14 days] (mean about 12.4 h); checkpoints every
//     U(30, 60) min; preemptible; racks preferred (2+ tasks), one block
//     required above 8 tasks.
//   - fine-tuning: one task of 1, 2, 4 or 8 GPUs (30, 25, 25, 20); median
//     3 h, sigma 0.8, [15 min, 2 days]; checkpoints every U(30, 60) min;
//     preemptible.
//   - inference: a service of 1, 2 or 4 replicas (40, 35, 25), each 1 GPU
//     (30), 2 GPUs (15), MIG 1g.10gb (20), MIG 2g.20gb (15), or 500 (10) or
//     250 (10) milli-GPU; median 2 days, sigma 1.0, [6 h, 30 days]; not
//     preemptible, elastic down to one replica, replicas spread over racks
//     (preferred), no runtime estimate.
//   - notebook: one task of MIG 1g.10gb (60), 500 (20) or 250 (20)
//     milli-GPU; median 2 h, sigma 0.9, [10 min, 12 h]; interactive: not
//     preemptible, no checkpoints.
func DefaultShapes() []Shape {
	return []Shape{trainingShape(), fineTuningShape(), inferenceShape(), notebookShape()}
}

func trainingShape() Shape {
	return Shape{
		Class: Training,
		Tasks: []Weighted[int]{{2, 30}, {4, 25}, {8, 20}, {16, 12}, {32, 8}, {64, 5}},
		Demands: []Weighted[job.Demand]{
			{job.Demand{GPUs: 8, CPUMilli: 8 * trainCPUPerGPU, MemoryMiB: 8 * trainMemPerGPU}, 1},
		},
		Duration:    Lognormal{Median: 6 * time.Hour, Sigma: 1.2, Min: 30 * time.Minute, Max: 14 * 24 * time.Hour},
		Checkpoint:  Span{30 * time.Minute, 60 * time.Minute},
		Preemptible: true,
		Topology: []Rule{
			{MinTasks: 2, Constraint: job.Constraint{Level: levelRack}},
			{MinTasks: 9, Constraint: job.Constraint{Level: levelBlock, Required: true}},
		},
	}
}

func fineTuningShape() Shape {
	gpus := func(n int) job.Demand {
		return job.Demand{GPUs: n, CPUMilli: int64(n) * trainCPUPerGPU, MemoryMiB: int64(n) * trainMemPerGPU}
	}
	return Shape{
		Class:       FineTuning,
		Demands:     []Weighted[job.Demand]{{gpus(1), 30}, {gpus(2), 25}, {gpus(4), 25}, {gpus(8), 20}},
		Duration:    Lognormal{Median: 3 * time.Hour, Sigma: 0.8, Min: 15 * time.Minute, Max: 48 * time.Hour},
		Checkpoint:  Span{30 * time.Minute, 60 * time.Minute},
		Preemptible: true,
	}
}

func inferenceShape() Shape {
	const cpu, mem = 8_000, 64 * gib
	return Shape{
		Class: Inference,
		Tasks: []Weighted[int]{{1, 40}, {2, 35}, {4, 25}},
		Demands: []Weighted[job.Demand]{
			{job.Demand{GPUs: 1, CPUMilli: cpu, MemoryMiB: mem}, 30},
			{job.Demand{GPUs: 2, CPUMilli: 2 * cpu, MemoryMiB: 2 * mem}, 15},
			{job.Demand{MIG: "1g.10gb", CPUMilli: cpu / 2, MemoryMiB: mem / 2}, 20},
			{job.Demand{MIG: "2g.20gb", CPUMilli: cpu / 2, MemoryMiB: mem / 2}, 15},
			{job.Demand{GPUMilli: 500, CPUMilli: cpu / 2, MemoryMiB: mem / 2}, 10},
			{job.Demand{GPUMilli: 250, CPUMilli: cpu / 2, MemoryMiB: mem / 2}, 10},
		},
		Duration:   Lognormal{Median: 48 * time.Hour, Sigma: 1.0, Min: 6 * time.Hour, Max: 30 * 24 * time.Hour},
		Elastic:    true,
		NoEstimate: true,
		Topology:   []Rule{{MinTasks: 2, Constraint: job.Constraint{Level: levelRack, Spread: true}}},
	}
}

func notebookShape() Shape {
	const cpu, mem = 4_000, 32 * gib
	return Shape{
		Class: Notebook,
		Demands: []Weighted[job.Demand]{
			{job.Demand{MIG: "1g.10gb", CPUMilli: cpu, MemoryMiB: mem}, 60},
			{job.Demand{GPUMilli: 500, CPUMilli: cpu, MemoryMiB: mem}, 20},
			{job.Demand{GPUMilli: 250, CPUMilli: cpu, MemoryMiB: mem}, 20},
		},
		Duration: Lognormal{Median: 2 * time.Hour, Sigma: 0.9, Min: 10 * time.Minute, Max: 12 * time.Hour},
	}
}

// The default fleet size DefaultFourTenants is sized for.
const (
	DefaultGPUs = 2048 // 256 fleet.Synthetic nodes of 8 GPUs
	DefaultLoad = 0.8
)

// DefaultFourTenants is four tenants with different mixes over the default
// shapes (weights are shares of bursts):
//
//	tenant    weight priority  mix
//	research  0.35   1         training 0.35, fine-tuning 0.35, notebook 0.30
//	product   0.25   3         inference 0.55, fine-tuning 0.35, training 0.10
//	platform  0.15   2         inference 0.40, training 0.30, fine-tuning 0.30
//	interns   0.25   0         notebook 0.70, fine-tuning 0.30
//
// Bursts of a geometric number of jobs (mean 3) arrive as a Poisson
// process and spread over 10 minutes; the rate offers a load of
// DefaultLoad to DefaultGPUs GPUs (see ForLoad). Estimates are the true
// duration times U(1, 3): users over-estimate.
func DefaultFourTenants(horizon time.Duration) GenSpec {
	mix := func(w ...Weighted[string]) []Weighted[string] { return w }
	spec := GenSpec{
		Horizon:  horizon,
		Arrivals: Process{PerHour: 1, BurstMean: 3, BurstWithin: 10 * time.Minute},
		Tenants: []Tenant{
			{Name: "research", Weight: 0.35, Priority: 1,
				Mix: mix(Weighted[string]{Training, 0.35}, Weighted[string]{FineTuning, 0.35}, Weighted[string]{Notebook, 0.30})},
			{Name: "product", Weight: 0.25, Priority: 3,
				Mix: mix(Weighted[string]{Inference, 0.55}, Weighted[string]{FineTuning, 0.35}, Weighted[string]{Training, 0.10})},
			{Name: "platform", Weight: 0.15, Priority: 2,
				Mix: mix(Weighted[string]{Inference, 0.40}, Weighted[string]{Training, 0.30}, Weighted[string]{FineTuning, 0.30})},
			{Name: "interns", Weight: 0.25, Priority: 0,
				Mix: mix(Weighted[string]{Notebook, 0.70}, Weighted[string]{FineTuning, 0.30})},
		},
		Shapes:    DefaultShapes(),
		Estimates: Noise{Min: 1, Max: 3},
	}
	return mustForLoad(spec, DefaultGPUs, DefaultLoad)
}

// The scale preset: about Jobs100k arrivals offering Load100k to a
// fleet.Synthetic of Nodes100k nodes.
const (
	Jobs100k  = 100_000
	Nodes100k = 2000
	GPUs100k  = Nodes100k * 8
	Load100k  = 0.85
)

// Spec100k is DefaultFourTenants sized for a 2,000-node fleet.Synthetic
// built with MIG dynamic (16,000 H100-80GB GPUs): fractional demands become
// MIG profiles (SharingMIG), the rate offers a load of Load100k, and the
// horizon (whole hours) makes about Jobs100k arrivals.
func Spec100k() GenSpec {
	spec := DefaultFourTenants(time.Hour)
	spec.Sharing = SharingMIG
	spec = mustForLoad(spec, GPUs100k, Load100k)
	hours := math.Round(Jobs100k / spec.Arrivals.PerHour)
	spec.Horizon = time.Duration(hours) * time.Hour
	return spec
}

// Synthetic100k generates Spec100k with a seed.
func Synthetic100k(seed uint64) Workload {
	w, err := Generate(Spec100k(), seed)
	if err != nil {
		panic("workload: the 100k preset is invalid: " + err.Error())
	}
	return w
}

// mustForLoad sizes a built-in spec; an error is a bug in the preset.
func mustForLoad(spec GenSpec, gpus int, load float64) GenSpec {
	out, err := spec.ForLoad(gpus, load)
	if err != nil {
		panic("workload: built-in spec: " + err.Error())
	}
	return out
}

package workload

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

// GenSpec describes a generated workload. Zero-valued optional fields take
// the defaults noted on them.
type GenSpec struct {
	Horizon  time.Duration // arrivals come in [0, Horizon)
	Arrivals Process
	Tenants  []Tenant
	Shapes   []Shape // one per class a tenant's Mix names
	// Estimates turns true durations into users' estimates (Job.Runtime);
	// the zero Noise gives perfect estimates.
	Estimates Noise
	// Sharing limits the GPU-sharing kinds jobs may ask for, so that a
	// workload fits a fleet without time-slicing or MIG; "" allows all.
	Sharing Sharing
	Prefix  string // job names are Prefix-NNNNNN; default "job"
}

// Process is the arrival process: bursts arrive as a Poisson process,
// each of a geometric number of jobs with mean BurstMean, the jobs of a
// burst spread uniformly over [start, start+BurstWithin). A burst is one
// tenant submitting one class of work (a sweep). BurstMean <= 1 gives a
// plain Poisson process of single jobs.
type Process struct {
	PerHour     float64 // mean jobs per hour, bursts included
	BurstMean   float64
	BurstWithin time.Duration
}

// Tenant is one team submitting work.
type Tenant struct {
	Name     string
	Weight   float64 // relative share of arrivals (of bursts)
	Priority int
	Queue    string             // "" submits to the tenant's queue
	Mix      []Weighted[string] // class name -> relative weight
}

// Shape says what the jobs of one class look like.
type Shape struct {
	Class    string
	Tasks    []Weighted[int]        // task counts; empty means 1
	Demands  []Weighted[job.Demand] // what each task asks for
	Duration Lognormal              // true run time
	// Checkpoint is the checkpoint interval, drawn per job and rounded to
	// the minute; the zero Span means no checkpoints.
	Checkpoint  Span
	Preemptible bool
	// Elastic jobs with more than one task may start with one task
	// (MinMember 1) and grow (services).
	Elastic bool
	// NoEstimate leaves Job.Runtime 0: users do not say how long a
	// long-running service will run.
	NoEstimate bool
	Topology   []Rule // constraints, by job size
}

// Rule adds a topology constraint to jobs of at least MinTasks tasks.
type Rule struct {
	MinTasks   int
	Constraint job.Constraint
}

// Sharing limits how generated tasks share GPUs.
type Sharing string

// Sharing modes.
const (
	// SharingAll keeps every demand as the shape gives it.
	SharingAll Sharing = ""
	// SharingMIG turns fractional (time-sliced, memory or milli) demands
	// into the smallest MIG profile (1g.10gb ... 7g.80gb, H100-80GB names)
	// with at least as large a fraction; for MIG-capable fleets without
	// time-slicing, such as fleet.Synthetic with MIG dynamic.
	SharingMIG Sharing = "mig"
	// SharingWhole turns every MIG or fractional demand into one whole GPU.
	SharingWhole Sharing = "whole"
)

// migProfiles are the H100-80GB profiles SharingMIG chooses from, by
// compute fraction (sevenths of a GPU).
var migProfiles = []struct {
	sevenths int
	name     string
}{{1, "1g.10gb"}, {2, "2g.20gb"}, {3, "3g.40gb"}, {4, "4g.40gb"}, {7, "7g.80gb"}}

// Load-estimate assumptions for demands whose GPU fraction depends on the
// node: a time-slice share is a quarter of a GPU, a memory fraction is of
// an 80 GB card.
const (
	assumedSlices    = 4
	assumedMemoryMiB = 80 * 1024
)

// apply converts d under the sharing mode.
func (s Sharing) apply(d job.Demand) job.Demand {
	kind := d.Kind()
	switch {
	case s == SharingWhole && (kind == job.MIG || kind == job.Shared):
		return withGPU(d, job.Demand{GPUs: 1})
	case s == SharingMIG && kind == job.Shared:
		f := GPUFraction(d)
		for _, p := range migProfiles {
			if float64(p.sevenths)/7 >= f-1e-9 {
				return withGPU(d, job.Demand{MIG: p.name})
			}
		}
		return withGPU(d, job.Demand{GPUs: 1})
	}
	return d
}

// withGPU replaces the GPU part of d by that of g, keeping the rest.
func withGPU(d, g job.Demand) job.Demand {
	g.CPUMilli, g.MemoryMiB, g.Models = d.CPUMilli, d.MemoryMiB, d.Models
	return g
}

// GPUFraction is the part of a GPU (whole GPUs count in full) one task of
// d uses, for load estimates and accounting: MIG profiles by compute
// (sevenths), shares and memory fractions under the assumptions above.
func GPUFraction(d job.Demand) float64 {
	switch {
	case d.GPUs > 0:
		return float64(d.GPUs)
	case d.MIG != "":
		return MIGFraction(d.MIG)
	case d.GPUMilli > 0:
		return float64(d.GPUMilli) / 1000
	case d.Shares > 0:
		return min(float64(d.Shares)/assumedSlices, 1)
	case d.GPUMemoryMiB > 0:
		return min(float64(d.GPUMemoryMiB)/assumedMemoryMiB, 1)
	}
	return 0
}

// MIGFraction is the share of a GPU's compute (sevenths) a MIG profile
// such as "3g.40gb" has; 0 for a name of another form.
func MIGFraction(profile string) float64 {
	c, _ := migCompute(profile)
	return float64(c) / 7
}

// migCompute reads the compute slices of a profile name "<c>g.<m>gb".
func migCompute(profile string) (int, error) {
	c, rest, ok := strings.Cut(profile, "g.")
	n, err := strconv.Atoi(c)
	if !ok || err != nil || n < 1 || n > 7 || !strings.HasSuffix(rest, "gb") {
		return 0, fmt.Errorf("MIG profile %q, want <compute>g.<memory>gb with compute 1..7", profile)
	}
	return n, nil
}

// Validate reports everything wrong with s.
func (s GenSpec) Validate() error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	if s.Horizon <= 0 {
		add(fmt.Errorf("horizon %v, want more than 0", s.Horizon))
	}
	if err := s.Arrivals.check(); err != nil {
		add(fmt.Errorf("arrivals: %w", err))
	}
	if err := s.Estimates.check(); err != nil {
		add(fmt.Errorf("estimates: %w", err))
	}
	add(s.checkMix())
	return errors.Join(errs...)
}

// checkMix validates what the expected load depends on: sharing, shapes
// and tenants.
func (s GenSpec) checkMix() error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	if !slices.Contains([]Sharing{SharingAll, SharingMIG, SharingWhole}, s.Sharing) {
		add(fmt.Errorf("sharing %q, want %q, %q or %q", s.Sharing, SharingAll, SharingMIG, SharingWhole))
	}
	classes := map[string]bool{}
	for i, sh := range s.Shapes {
		if classes[sh.Class] {
			add(fmt.Errorf("shape %d: class %q defined twice", i, sh.Class))
		}
		classes[sh.Class] = true
		if err := sh.check(); err != nil {
			add(fmt.Errorf("shape %d (%q): %w", i, sh.Class, err))
		}
	}
	add(s.checkTenants(classes))
	return errors.Join(errs...)
}

func (p Process) check() error {
	switch {
	case !(p.PerHour > 0) || math.IsInf(p.PerHour, 0):
		return fmt.Errorf("rate %v jobs per hour, want a finite number above 0", p.PerHour)
	case p.BurstMean < 0 || math.IsNaN(p.BurstMean) || math.IsInf(p.BurstMean, 0):
		return fmt.Errorf("mean burst size %v, want a finite number of at least 0", p.BurstMean)
	case p.BurstWithin < 0:
		return fmt.Errorf("burst window %v, want at least 0", p.BurstWithin)
	}
	return nil
}

func (s GenSpec) checkTenants(classes map[string]bool) error {
	if len(s.Tenants) == 0 {
		return errors.New("no tenants")
	}
	var errs []error
	tenants := make([]Weighted[string], len(s.Tenants))
	seen := map[string]bool{}
	for i, t := range s.Tenants {
		tenants[i] = Weighted[string]{t.Name, t.Weight}
		if t.Name == "" || seen[t.Name] {
			errs = append(errs, fmt.Errorf("tenant %d: empty or duplicate name %q", i, t.Name))
		}
		seen[t.Name] = true
		if err := checkWeights(t.Mix); err != nil {
			errs = append(errs, fmt.Errorf("tenant %q: mix: %w", t.Name, err))
		}
		for _, c := range t.Mix {
			if !classes[c.Value] {
				errs = append(errs, fmt.Errorf("tenant %q: class %q has no shape", t.Name, c.Value))
			}
		}
	}
	if err := checkWeights(tenants); err != nil {
		errs = append(errs, fmt.Errorf("tenants: %w", err))
	}
	return errors.Join(errs...)
}

// check validates a shape, including a trial job of its largest size.
func (sh Shape) check() error {
	if sh.Class == "" {
		return errors.New("no class name")
	}
	var errs []error
	if len(sh.Tasks) > 0 {
		if err := checkWeights(sh.Tasks); err != nil {
			errs = append(errs, fmt.Errorf("tasks: %w", err))
		}
	}
	for _, t := range sh.Tasks {
		if t.Value < 1 {
			errs = append(errs, fmt.Errorf("task count %d, want at least 1", t.Value))
		}
	}
	if err := checkWeights(sh.Demands); err != nil {
		errs = append(errs, fmt.Errorf("demands: %w", err))
	}
	for _, d := range sh.Demands {
		if d.Value.MIG != "" {
			if _, err := migCompute(d.Value.MIG); err != nil {
				errs = append(errs, err)
			}
		}
		trial := job.Job{Name: "trial", Groups: []job.Group{{Name: sh.Class, Count: 1, Task: d.Value}}}
		if err := trial.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := sh.Duration.check(); err != nil {
		errs = append(errs, fmt.Errorf("duration: %w", err))
	}
	if err := sh.Checkpoint.check(); err != nil {
		errs = append(errs, fmt.Errorf("checkpoint: %w", err))
	}
	errs = append(errs, sh.checkTopology())
	return errors.Join(errs...)
}

// checkTopology validates the constraints a job of the largest size gets.
func (sh Shape) checkTopology() error {
	most := 1
	for _, t := range sh.Tasks {
		most = max(most, t.Value)
	}
	trial := job.Job{Name: "trial", Groups: []job.Group{{Name: sh.Class, Count: most}},
		Topology: sh.constraints(most)}
	return trial.Validate()
}

// constraints are the topology constraints of a job of n tasks.
func (sh Shape) constraints(n int) []job.Constraint {
	var out []job.Constraint
	for _, r := range sh.Topology {
		if n >= r.MinTasks {
			out = append(out, r.Constraint)
		}
	}
	return out
}

// ClassShares is the expected share of arrivals of each class, by class
// name: the sum over tenants of the tenant's share times the class's share
// of its mix.
func (s GenSpec) ClassShares() map[string]float64 {
	out := map[string]float64{}
	tenants := make([]Weighted[string], len(s.Tenants))
	for i, t := range s.Tenants {
		tenants[i] = Weighted[string]{t.Name, t.Weight}
	}
	pt := probabilities(tenants)
	for i, t := range s.Tenants {
		for j, pc := range probabilities(t.Mix) {
			out[t.Mix[j].Value] += pt[i] * pc
		}
	}
	return out
}

// GPUHoursPerJob is the expected GPU-hours of true work per arrival, from
// the exact means of the shapes' distributions (MIG by compute sevenths,
// shares as noted on GPUFraction, after Sharing). It needs valid tenants
// and shapes, not a horizon or rate.
func (s GenSpec) GPUHoursPerJob() (float64, error) {
	if err := s.checkMix(); err != nil {
		return 0, fmt.Errorf("gpu-hours per job: %w", err)
	}
	shares := s.ClassShares()
	total := 0.0
	for _, sh := range s.Shapes { // in order: the sum must not depend on map order
		total += shares[sh.Class] * sh.gpuHours(s.Sharing)
	}
	return total, nil
}

// gpuHours is the expected GPU-hours of one job of the shape.
func (sh Shape) gpuHours(sharing Sharing) float64 {
	tasks := 1.0
	if len(sh.Tasks) > 0 {
		tasks = 0
		for i, p := range probabilities(sh.Tasks) {
			tasks += p * float64(sh.Tasks[i].Value)
		}
	}
	gpus := 0.0
	for i, p := range probabilities(sh.Demands) {
		gpus += p * GPUFraction(sharing.apply(sh.Demands[i].Value))
	}
	return tasks * gpus * sh.Duration.Mean().Hours()
}

// ForLoad returns s with the arrival rate set so that the expected GPU
// work arriving per hour is load times gpus GPU-hours: the offered load on
// a fleet of that many GPUs (1 keeps it busy on average, if packing were
// perfect).
func (s GenSpec) ForLoad(gpus int, load float64) (GenSpec, error) {
	perJob, err := s.GPUHoursPerJob()
	if err != nil {
		return s, err
	}
	if perJob <= 0 || gpus <= 0 || !(load > 0) {
		return s, fmt.Errorf("for load: %v GPU-hours per job, %d GPUs, load %v: want all above 0", perJob, gpus, load)
	}
	s.Arrivals.PerHour = load * float64(gpus) / perJob
	return s, nil
}

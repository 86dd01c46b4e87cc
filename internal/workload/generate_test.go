package workload

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

const day = 24 * time.Hour

func TestGenerateDeterministic(t *testing.T) {
	spec := DefaultFourTenants(14 * day)
	a, err := Generate(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(spec, 1)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("seed 1 twice gave different workloads")
	}
	c, _ := Generate(spec, 2)
	if reflect.DeepEqual(a, c) {
		t.Fatal("seeds 1 and 2 gave the same workload")
	}
	if len(a.Arrivals) < 100 {
		t.Fatalf("%d arrivals in 14 days; the default rate is %.2f/h", len(a.Arrivals), spec.Arrivals.PerHour)
	}
}

// Every generated job is valid and matches its class's shape.
func TestGenerateShapes(t *testing.T) {
	spec := DefaultFourTenants(60 * day)
	w, err := Generate(spec, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	shapes := map[string]Shape{}
	for _, sh := range spec.Shapes {
		shapes[sh.Class] = sh
	}
	for i, a := range w.Arrivals {
		if a.At >= w.Horizon || a.At%time.Second != 0 {
			t.Fatalf("arrival %d at %v: not a whole second before the horizon %v", i, a.At, w.Horizon)
		}
		if want := fmt.Sprintf("job-%06d", i); a.Job.Name != want {
			t.Fatalf("arrival %d named %q, want %q", i, a.Job.Name, want)
		}
		if err := checkShape(a, shapes[a.Class]); err != "" {
			t.Fatalf("%s (%s): %s", a.Job.Name, a.Class, err)
		}
	}
}

// checkShape returns what is wrong with a against its shape, or "".
func checkShape(a Arrival, sh Shape) string {
	j, d := a.Job, a.Duration
	tasks := j.Tasks()
	switch {
	case d < sh.Duration.Min || (sh.Duration.Max > 0 && d > sh.Duration.Max):
		return "duration " + d.String() + " outside the shape's bounds"
	case sh.NoEstimate && j.Runtime != 0:
		return "an estimate on a class without one"
	case !sh.NoEstimate && (j.Runtime < d || j.Runtime > 3*d+time.Second):
		return "estimate " + j.Runtime.String() + " not within [1, 3] x " + d.String()
	case j.Preemptible != sh.Preemptible:
		return "wrong preemptibility"
	case sh.Checkpoint == (Span{}) && j.CheckpointEvery != 0,
		sh.Checkpoint != (Span{}) && (j.CheckpointEvery < sh.Checkpoint.Min || j.CheckpointEvery > sh.Checkpoint.Max ||
			j.CheckpointEvery%time.Minute != 0):
		return "checkpoint interval " + j.CheckpointEvery.String()
	case len(j.Topology) != len(sh.constraints(tasks)):
		return "wrong topology constraints"
	case j.Elastic != (sh.Elastic && tasks > 1):
		return "wrong elasticity"
	}
	if a.Class == Training {
		block := len(j.Topology) == 2 && j.Topology[1].Level == "block" && j.Topology[1].Required
		if block != (tasks > 8) || j.Groups[0].Task.GPUs != 8 {
			return "a training gang without 8 GPUs per task or a block constraint exactly above 8 tasks"
		}
	}
	if a.Class == Notebook && j.Groups[0].Task.Kind() != job.MIG && j.Groups[0].Task.Kind() != job.Shared {
		return "a notebook with whole GPUs"
	}
	return ""
}

// The mean inter-arrival time matches the rate; bursts show as gaps more
// variable than a Poisson process's (coefficient of variation 1).
func TestGenerateRates(t *testing.T) {
	cases := []struct {
		name         string
		process      Process
		cvMin, cvMax float64
	}{
		{"poisson", Process{PerHour: 30}, 0.95, 1.05},
		{"bursts of 3 in 10 min", Process{PerHour: 30, BurstMean: 3, BurstWithin: 10 * time.Minute}, 1.5, 3},
		{"bursts of 8 at once", Process{PerHour: 30, BurstMean: 8}, 2.5, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := tinySpec(2000 * time.Hour)
			spec.Arrivals = c.process
			w, err := Generate(spec, 11)
			if err != nil {
				t.Fatal(err)
			}
			n := float64(len(w.Arrivals))
			gotMean := spec.Horizon.Hours() / n
			wantMean := 1 / c.process.PerHour
			// The count's relative standard error is sqrt(E[S²]/E[S]/n)
			// for geometric burst sizes S; allow four of them.
			b := max(c.process.BurstMean, 1)
			tol := 4 * math.Sqrt((2*b*b-b)/b/n)
			if math.Abs(gotMean/wantMean-1) > tol {
				t.Errorf("mean inter-arrival %.4fh, want %.4fh within %.1f%%", gotMean, wantMean, 100*tol)
			}
			if cv := gapCV(w.Arrivals); cv < c.cvMin || cv > c.cvMax {
				t.Errorf("gap coefficient of variation %.2f, want %.2f..%.2f", cv, c.cvMin, c.cvMax)
			}
		})
	}
}

func gapCV(arr []Arrival) float64 {
	var sum, sq float64
	for i := 1; i < len(arr); i++ {
		g := (arr[i].At - arr[i-1].At).Seconds()
		sum += g
		sq += g * g
	}
	n := float64(len(arr) - 1)
	mean := sum / n
	return math.Sqrt(sq/n-mean*mean) / mean
}

// tinySpec is one tenant, one class: cheap jobs for rate tests.
func tinySpec(horizon time.Duration) GenSpec {
	return GenSpec{
		Horizon:  horizon,
		Arrivals: Process{PerHour: 10},
		Tenants:  []Tenant{{Name: "t", Weight: 1, Mix: []Weighted[string]{{Notebook, 1}}}},
		Shapes:   []Shape{notebookShape()},
	}
}

// Class and tenant shares of generated arrivals match the spec.
func TestGenerateProportions(t *testing.T) {
	spec := DefaultFourTenants(time.Hour)
	spec.Horizon = time.Duration(60000/spec.Arrivals.PerHour) * time.Hour // about 60,000 jobs
	w, err := Generate(spec, 5)
	if err != nil {
		t.Fatal(err)
	}
	classes, tenants := map[string]float64{}, map[string]float64{}
	for _, a := range w.Arrivals {
		classes[a.Class]++
		tenants[a.Job.Tenant]++
	}
	n := float64(len(w.Arrivals))
	wantTenants := map[string]float64{"research": 0.35, "product": 0.25, "platform": 0.15, "interns": 0.25}
	// Whole bursts share a class and tenant: about 20,000 bursts give a
	// standard error near 0.005; allow 0.02.
	for name, want := range wantTenants {
		if got := tenants[name] / n; math.Abs(got-want) > 0.02 {
			t.Errorf("tenant %s: %.3f of arrivals, want %.3f", name, got, want)
		}
	}
	wantClasses := spec.ClassShares()
	if math.Abs(wantClasses[Training]-0.1925) > 1e-12 {
		t.Errorf("expected training share %v, want 0.35*0.35 + 0.25*0.10 + 0.15*0.30 = 0.1925", wantClasses[Training])
	}
	for name, want := range wantClasses {
		if got := classes[name] / n; math.Abs(got-want) > 0.02 {
			t.Errorf("class %s: %.3f of arrivals, want %.3f", name, got, want)
		}
	}
}

func TestLognormalMean(t *testing.T) {
	cases := []struct {
		name string
		l    Lognormal
	}{
		{"training", trainingShape().Duration},
		{"inference", inferenceShape().Duration},
		{"unclamped", Lognormal{Median: time.Hour, Sigma: 0.5}},
		{"clamped hard", Lognormal{Median: time.Hour, Sigma: 2, Min: 50 * time.Minute, Max: 70 * time.Minute}},
		{"constant", Lognormal{Median: 5 * time.Minute, Min: 10 * time.Minute}},
	}
	const draws = 200_000
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newTestRand(9)
			sum := 0.0
			for range draws {
				sum += c.l.sample(r).Hours()
			}
			got, want := sum/draws, c.l.Mean().Hours()
			if math.Abs(got/want-1) > 0.02 {
				t.Errorf("sample mean %.4fh, analytic mean %.4fh", got, want)
			}
		})
	}
}

func TestGeometricMean(t *testing.T) {
	r := newTestRand(4)
	for _, mean := range []float64{0, 1, 3, 8} {
		sum, ones := 0, 0
		const draws = 100_000
		for range draws {
			k := geometric(r, mean)
			if k < 1 {
				t.Fatalf("geometric(%v) drew %d", mean, k)
			}
			sum += k
			if k == 1 {
				ones++
			}
		}
		want := max(mean, 1)
		if got := float64(sum) / draws; math.Abs(got/want-1) > 0.02 {
			t.Errorf("geometric(%v): mean %.3f", mean, got)
		}
		if got, want := float64(ones)/draws, 1/want; math.Abs(got-want) > 0.01 {
			t.Errorf("geometric(%v): P(1) = %.3f, want %.3f", mean, got, want)
		}
	}
}

func TestSharing(t *testing.T) {
	cpu := func(d job.Demand) job.Demand { d.CPUMilli, d.MemoryMiB = 4000, 1024; return d }
	cases := []struct {
		mode     Sharing
		in, want job.Demand
	}{
		{SharingAll, job.Demand{GPUMilli: 250}, job.Demand{GPUMilli: 250}},
		{SharingMIG, job.Demand{GPUMilli: 100}, job.Demand{MIG: "1g.10gb"}},
		{SharingMIG, job.Demand{GPUMilli: 250}, job.Demand{MIG: "2g.20gb"}},
		{SharingMIG, job.Demand{GPUMilli: 500}, job.Demand{MIG: "4g.40gb"}},
		{SharingMIG, job.Demand{GPUMilli: 999}, job.Demand{MIG: "7g.80gb"}},
		{SharingMIG, job.Demand{Shares: 1}, job.Demand{MIG: "2g.20gb"}}, // a quarter GPU
		{SharingMIG, job.Demand{MIG: "3g.40gb"}, job.Demand{MIG: "3g.40gb"}},
		{SharingMIG, job.Demand{GPUs: 2}, job.Demand{GPUs: 2}},
		{SharingWhole, job.Demand{MIG: "1g.10gb"}, job.Demand{GPUs: 1}},
		{SharingWhole, job.Demand{GPUMilli: 300}, job.Demand{GPUs: 1}},
		{SharingWhole, job.Demand{}, job.Demand{}},
	}
	for _, c := range cases {
		if got := c.mode.apply(cpu(c.in)); !reflect.DeepEqual(got, cpu(c.want)) {
			t.Errorf("%q.apply(%+v) = %+v, want %+v", c.mode, c.in, got, cpu(c.want))
		}
	}
}

func TestGenSpecValidate(t *testing.T) {
	cases := []struct {
		name   string
		change func(*GenSpec)
		want   string
	}{
		{"no horizon", func(s *GenSpec) { s.Horizon = 0 }, "horizon 0s"},
		{"no rate", func(s *GenSpec) { s.Arrivals.PerHour = 0 }, "rate 0 jobs per hour"},
		{"negative burst", func(s *GenSpec) { s.Arrivals.BurstMean = -1 }, "mean burst size -1"},
		{"no tenants", func(s *GenSpec) { s.Tenants = nil }, "no tenants"},
		{"unknown class", func(s *GenSpec) { s.Tenants[0].Mix[0].Value = "gaming" }, `class "gaming" has no shape`},
		{"zero weights", func(s *GenSpec) {
			for i := range s.Tenants {
				s.Tenants[i].Weight = 0
			}
		}, "tenants: no positive weight"},
		{"duplicate tenant", func(s *GenSpec) { s.Tenants[1].Name = s.Tenants[0].Name }, "duplicate name"},
		{"bad demand", func(s *GenSpec) { s.Shapes[3].Demands[1].Value.GPUMilli = 1000 }, "gpuMilli 1000"},
		{"bad MIG name", func(s *GenSpec) { s.Shapes[3].Demands[0].Value.MIG = "tiny" }, `MIG profile "tiny"`},
		{"zero tasks", func(s *GenSpec) { s.Shapes[0].Tasks[0].Value = 0 }, "task count 0"},
		{"duration", func(s *GenSpec) { s.Shapes[1].Duration.Median = 0 }, "duration: median 0s"},
		{"checkpoint", func(s *GenSpec) { s.Shapes[0].Checkpoint = Span{time.Hour, time.Minute} }, "checkpoint: span"},
		{"same level twice", func(s *GenSpec) { s.Shapes[0].Topology[1].Constraint.Level = "rack" }, `two constraints on level "rack"`},
		{"estimates", func(s *GenSpec) { s.Estimates = Noise{0, 2} }, "estimate factor"},
		{"sharing", func(s *GenSpec) { s.Sharing = "some" }, `sharing "some"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := DefaultFourTenants(day)
			c.change(&spec)
			err := spec.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
			if _, gerr := Generate(spec, 1); gerr == nil {
				t.Error("Generate accepted the spec")
			}
		})
	}
	if err := DefaultFourTenants(day).Validate(); err != nil {
		t.Errorf("default spec: %v", err)
	}
}

func TestSpec100k(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 100,000 jobs")
	}
	spec := Spec100k()
	w := Synthetic100k(1)
	n := len(w.Arrivals)
	if n < 97_000 || n > 103_000 {
		t.Errorf("%d arrivals over %v, want about 100,000", n, spec.Horizon)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	gpuHours := 0.0
	for _, a := range w.Arrivals {
		d := a.Job.Groups[0].Task
		if d.Kind() == job.Shared {
			t.Fatalf("%s asks for a fractional GPU; the 100k preset allows MIG only", a.Job.Name)
		}
		gpuHours += float64(a.Job.Tasks()) * GPUFraction(d) * a.Duration.Hours()
	}
	want, err := spec.GPUHoursPerJob()
	if err != nil {
		t.Fatal(err)
	}
	if got := gpuHours / float64(n); math.Abs(got/want-1) > 0.1 {
		t.Errorf("%.1f GPU-hours per job, analytic %.1f", got, want)
	}
	offered := gpuHours / spec.Horizon.Hours() / GPUs100k
	if math.Abs(offered-Load100k) > 0.1 {
		t.Errorf("offered load %.2f of %d GPUs, want about %.2f", offered, GPUs100k, Load100k)
	}
}

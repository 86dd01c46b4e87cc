package workload

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

func readJobsFile(t *testing.T, path string) *Jobs {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	j, err := ReadJobs(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestReadJobs(t *testing.T) {
	tests := []struct {
		path    string
		names   []string // in arrival order
		first   Arrival
		outcome Outcome
		horizon time.Duration
	}{
		{
			path:  "testdata/jobs.csv",
			names: []string{"train-1", "notebook-1", "infer-1"},
			first: Arrival{At: 0, Duration: time.Hour, Class: Training, Job: &job.Job{Name: "train-1", Tenant: "research", Priority: 10,
				CheckpointEvery: 10 * time.Minute, Runtime: 2 * time.Hour,
				Groups: []job.Group{{Name: "tasks", Count: 2, Task: job.Demand{GPUs: 8, CPUMilli: 16000, MemoryMiB: 65536, Models: []string{"H100-80GB"}}}}}},
			outcome: Outcome{Start: 5 * time.Second, End: 3605 * time.Second, Started: true, Ended: true},
			horizon: 3605 * time.Second,
		},
		{
			path:  "testdata/jobs_minimal.csv",
			names: []string{"j1", "j2"},
			first: Arrival{At: 0, Duration: 2 * time.Minute, Class: Recorded, Job: &job.Job{Name: "j1", Tenant: "a",
				Groups: []job.Group{{Name: "tasks", Count: 4}}}},
			horizon: 10 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			j := readJobsFile(t, tt.path)
			var names []string
			for _, a := range j.Workload.Arrivals {
				names = append(names, a.Job.Name)
			}
			if !reflect.DeepEqual(names, tt.names) {
				t.Errorf("arrivals %v, want %v", names, tt.names)
			}
			if got := j.Workload.Arrivals[0]; !reflect.DeepEqual(got, tt.first) {
				t.Errorf("first arrival\n got %+v %+v\nwant %+v %+v", got, got.Job, tt.first, tt.first.Job)
			}
			if got := j.Outcomes[tt.names[0]]; got != tt.outcome {
				t.Errorf("outcome %+v, want %+v", got, tt.outcome)
			}
			if j.Workload.Horizon != tt.horizon {
				t.Errorf("horizon %v, want %v", j.Workload.Horizon, tt.horizon)
			}
			if err := j.Workload.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestReadJobsShapes(t *testing.T) {
	j := readJobsFile(t, "testdata/jobs.csv")
	byName := map[string]Arrival{}
	for _, a := range j.Workload.Arrivals {
		byName[a.Job.Name] = a
	}
	nb := byName["notebook-1"]
	if d := nb.Job.Groups[0].Task; d.GPUMilli != 500 || !nb.Job.Preemptible || nb.At != 30500*time.Millisecond {
		t.Errorf("notebook-1: %+v preemptible %v at %v, want a half GPU, preemptible, at 30.5s", d, nb.Job.Preemptible, nb.At)
	}
	if o := j.Outcomes["notebook-1"]; o.Started || o.Ended {
		t.Errorf("notebook-1 outcome %+v, want none recorded", o)
	}
	inf := byName["infer-1"]
	if inf.Job.Groups[0].Task.MIG != "1g.10gb" || inf.Class != Recorded {
		t.Errorf("infer-1: %+v class %q", inf.Job.Groups[0].Task, inf.Class)
	}
	if o := j.Outcomes["infer-1"]; !o.Started || o.Ended || o.Start != 100*time.Second {
		t.Errorf("infer-1 outcome %+v, want started at 100s, not ended", o)
	}
}

// TestJobsRoundTrip writes a generated workload and reads it back.
func TestJobsRoundTrip(t *testing.T) {
	spec, err := DefaultFourTenants(24*time.Hour).ForLoad(64, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Generate(spec, 3)
	if err != nil {
		t.Fatal(err)
	}
	var single []Arrival // the format holds jobs of one shape
	for _, a := range w.Arrivals {
		if len(a.Job.Groups) == 1 {
			// what the format does not hold
			j := *a.Job
			j.Topology, j.Tolerations, j.Elastic, j.Queue = nil, nil, false, ""
			j.Groups = []job.Group{j.Groups[0]}
			j.Groups[0].Name = "tasks"
			a.Job = &j
			a.At = a.At.Round(time.Millisecond)
			a.Duration = a.Duration.Round(time.Millisecond)
			a.Job.Runtime = a.Job.Runtime.Round(time.Millisecond)
			a.Job.CheckpointEvery = a.Job.CheckpointEvery.Round(time.Millisecond)
			single = append(single, a)
		}
	}
	if len(single) < 10 {
		t.Fatalf("only %d single-shape jobs generated", len(single))
	}
	w.Arrivals = single
	outcomes := map[string]Outcome{single[0].Job.Name: {Start: time.Minute, End: time.Hour, Started: true, Ended: true}}
	var buf bytes.Buffer
	if err := WriteJobs(&buf, &w, outcomes); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJobs(&buf, "roundtrip")
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range back.Workload.Arrivals {
		if !reflect.DeepEqual(a, single[i]) {
			t.Fatalf("arrival %d:\n got %+v %+v\nwant %+v %+v", i, a, a.Job, single[i], single[i].Job)
		}
	}
	if back.Outcomes[single[0].Job.Name] != outcomes[single[0].Job.Name] {
		t.Errorf("outcome %+v, want %+v", back.Outcomes[single[0].Job.Name], outcomes[single[0].Job.Name])
	}
}

func TestReadJobsErrors(t *testing.T) {
	const head = "name,submit_s,duration_s,tenant,tasks,gpus,share,preemptible\n"
	tests := []struct{ in, want string }{
		{"name,submit_s,duration_s,tenant\n", "bad.csv:1: no column \"tasks\""},
		{"name,submit_s,duration_s,tenant,tasks,colour\n", "bad.csv:1: unknown column \"colour\""},
		{"name,name,submit_s,duration_s,tenant,tasks\n", "bad.csv:1: column \"name\" twice"},
		{head + "a,0,60,t,1,1,,\nb,x,60,t,1,1,,\n", `bad.csv:3: job "b": submit_s "x": want seconds`},
		{head + "a,0,0,t,1,1,,\n", `bad.csv:2: job "a": duration 0s`},
		{head + "a,0,60,t,0,1,,\n", `bad.csv:2: job "a": tasks "0": want a whole number at least 1`},
		{head + "a,0,60,t,1,-2,,\n", `bad.csv:2: job "a": gpus "-2": want a whole number at least 0`},
		{head + "a,0,60,t,1,0,1.5,\n", `bad.csv:2: job "a": share "1.5": want a fraction`},
		{head + "a,0,60,t,1,1,0.5,\n", `bad.csv:2: job "a": group 0: "tasks": asks for more than one`},
		{head + "a,0,60,t,1,1,,maybe\n", `bad.csv:2: job "a": preemptible "maybe"`},
		{head + "a,0,60,t,1,1,,\n# comment\na,5,60,t,1,1,,\n", `bad.csv:4: job "a" named twice`},
		{head + "a,0,60,,1,1,,\n", ""}, // no tenant is allowed: the default tenant
	}
	for _, tt := range tests {
		_, err := ReadJobs(strings.NewReader(tt.in), "bad.csv")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: error %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestReadJobsByGPUMemory(t *testing.T) {
	head := "name,submit_s,duration_s,tenant,tasks,gpu_memory,gpu_memory_per_gpu,models,cpu_milli\n"
	got, err := ReadJobs(strings.NewReader(head+"ft,0,60,a,1,600G,80G,H100-80GB|H200,4000\n"), "jobs.csv")
	if err != nil {
		t.Fatal(err)
	}
	j := got.Workload.Arrivals[0].Job
	want := &job.MemoryAsk{TotalMiB: 600 << 10, MinPerGPUMiB: 80 << 10, Models: []string{"H100-80GB", "H200"}}
	if !reflect.DeepEqual(j.ByGPUMemory, want) || len(j.Groups) != 1 || j.Groups[0].Task.CPUMilli != 4000 || j.Groups[0].Task.Models != nil {
		t.Errorf("job %+v asks %+v, want %+v with one task of 4 CPUs", j, j.ByGPUMemory, want)
	}
	for _, tc := range []struct{ row, want string }{
		{"a,0,60,a,1,lots,,,\n", `jobs.csv:2: job "a": gpu_memory: "lots"`},
		{"a,0,60,a,1,600G,much,,\n", `jobs.csv:2: job "a": gpu_memory_per_gpu: "much"`},
		{"a,0,60,a,1,,80G,,\n", "jobs.csv:2: job \"a\": gpu_memory_per_gpu goes with gpu_memory"},
		{"a,0,60,a,2,600G,,,\n", "jobs.csv:2: job \"a\": byGPUMemory: group \"tasks\" may give only cpu and memory, with count 1"},
	} {
		_, err := ReadJobs(strings.NewReader(head+tc.row), "jobs.csv")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("row %q: error %v, want one containing %q", tc.row, err, tc.want)
		}
	}
}

// A jobs file written to a path reads back as written, outcomes included;
// a path that is not there is an error naming it.
func TestJobsFileRoundTrip(t *testing.T) {
	w := &Workload{Horizon: time.Hour, Arrivals: []Arrival{{At: time.Minute, Duration: 10 * time.Minute, Class: Recorded,
		Job: &job.Job{Name: "a", Tenant: "t", Groups: []job.Group{{Name: "tasks", Count: 2, Task: job.Demand{GPUs: 4}}}}}}}
	path := filepath.Join(t.TempDir(), "jobs.csv")
	out := map[string]Outcome{"a": {Start: 2 * time.Minute, Started: true}}
	if err := WriteJobsFile(path, &Jobs{Workload: *w, Outcomes: out}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJobsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Workload.Arrivals) != 1 || got.Workload.Arrivals[0].Job.Tasks() != 2 || got.Outcomes["a"] != out["a"] {
		t.Errorf("read back %+v, outcomes %v", got.Workload.Arrivals, got.Outcomes)
	}
	if _, err := ReadJobsFile(filepath.Join(t.TempDir(), "none.csv")); err == nil || !strings.Contains(err.Error(), "none.csv") {
		t.Errorf("a missing file: %v", err)
	}
}

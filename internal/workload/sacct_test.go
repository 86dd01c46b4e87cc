package workload

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

func TestReadSacct(t *testing.T) {
	f, err := os.Open("testdata/sacct.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	j, skipped, err := ReadSacct(f, "sacct.txt")
	if err != nil {
		t.Fatal(err)
	}
	if want := (SacctSkipped{Steps: 1, NotRun: 1, NotEnded: 1}); skipped != want {
		t.Errorf("skipped %+v, want %+v", skipped, want)
	}
	tests := []struct {
		arrival Arrival
		outcome Outcome
	}{
		{Arrival{At: 0, Duration: time.Hour, Class: Recorded, Job: &job.Job{Name: "101", Tenant: "research", Priority: 4294, Runtime: 2 * time.Hour,
			Groups: []job.Group{{Name: "tasks", Count: 2, Task: job.Demand{GPUs: 8, CPUMilli: 8000, MemoryMiB: 65536, Models: []string{"H100-80GB"}}}}}},
			Outcome{Start: 10 * time.Second, End: 3610 * time.Second, Started: true, Ended: true}},
		// No Account: the user is the tenant; a zero-second run lasts a second.
		{Arrival{At: time.Minute, Duration: time.Second, Class: Recorded, Job: &job.Job{Name: "102", Tenant: "bob", Priority: 100, Runtime: 24 * time.Hour,
			Groups: []job.Group{{Name: "tasks", Count: 1, Task: job.Demand{GPUs: 1, CPUMilli: 2000, MemoryMiB: 4096}}}}},
			Outcome{Start: time.Minute, End: time.Minute + time.Second, Started: true, Ended: true}},
		// 3 GPUs on 2 nodes do not divide: a task per GPU.
		{Arrival{At: 2 * time.Minute, Duration: 15 * time.Minute, Class: Recorded, Job: &job.Job{Name: "105", Tenant: "research", Priority: 7, Runtime: 15 * time.Minute,
			Groups: []job.Group{{Name: "tasks", Count: 3, Task: job.Demand{GPUs: 1, CPUMilli: 1000, MemoryMiB: 1000}}}}},
			Outcome{Start: 30 * time.Minute, End: 45 * time.Minute, Started: true, Ended: true}},
	}
	if len(j.Workload.Arrivals) != len(tests) {
		t.Fatalf("%d arrivals, want %d", len(j.Workload.Arrivals), len(tests))
	}
	for i, tt := range tests {
		got := j.Workload.Arrivals[i]
		if !reflect.DeepEqual(got, tt.arrival) {
			t.Errorf("arrival %d\n got %+v %+v\nwant %+v %+v", i, got, got.Job, tt.arrival, tt.arrival.Job)
		}
		if o := j.Outcomes[got.Job.Name]; o != tt.outcome {
			t.Errorf("%s: outcome %+v, want %+v", got.Job.Name, o, tt.outcome)
		}
	}
	if err := j.Workload.Validate(); err != nil {
		t.Error(err)
	}
}

func TestReadSacctErrors(t *testing.T) {
	const head = "JobID|Account|Submit|Start|End|AllocTRES\n"
	tests := []struct{ in, want string }{
		{"", "s.txt: no header line"},
		{"JobID|Submit|Start|End|AllocTRES\n", "s.txt:1: no Account or User column"},
		{"JobID|Account|Start|End\n", "s.txt:1: no Submit, no AllocTRES or ReqTRES column"},
		{head + "1|a|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:10:00|cpu=1\n2|a|yesterday|x|y|cpu=1\n",
			`s.txt:3: Submit "yesterday": want a time`},
		{head + "1|a|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:10:00\n", "s.txt:2: 5 fields, want 6"},
		{head + "1|a|2024-03-01T12:00:00|2024-03-01T11:00:00|2024-03-01T12:10:00|cpu=1\n", "s.txt:2: job 1: Submit 2024-03-01T12:00:00, Start 2024-03-01T11:00:00"},
		{head + "1|a|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:10:00|cpu=1,gres/gpu=two\n", `s.txt:2: job 1: TRES "cpu=1,gres/gpu=two": gres/gpu="two"`},
		{head + "1|a|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:10:00|mem=lots\n", `s.txt:2: job 1: TRES "mem=lots": mem="lots"`},
		{head + "1||2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:10:00|cpu=1\n", "s.txt:2: job 1: no Account or User"},
	}
	for _, tt := range tests {
		_, _, err := ReadSacct(strings.NewReader(tt.in), "s.txt")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.in, err, tt.want)
		}
	}
}

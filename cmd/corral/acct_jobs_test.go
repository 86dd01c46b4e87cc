package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/workload"
)

// checkAcctJobs reads corral acct --jobs output back as a jobs file and
// checks that job name is in it, with its priority, started no earlier
// than submitted, and ran for its duration.
func checkAcctJobs(t *testing.T, out, name string, priority int) *workload.Jobs {
	t.Helper()
	jobs, err := workload.ReadJobs(strings.NewReader(out), "acct --jobs")
	if err != nil {
		t.Fatalf("acct --jobs does not read back: %v\n%s", err, out)
	}
	for _, a := range jobs.Workload.Arrivals {
		if a.Job.Name != name {
			continue
		}
		o := jobs.Outcomes[name]
		if a.Job.Priority != priority || !o.Started || !o.Ended || o.Start < a.At || o.End-o.Start != a.Duration {
			t.Errorf("acct --jobs: %s priority %d, arrives %v, outcome %+v, duration %v:\n%s", name, a.Job.Priority, a.At, o, a.Duration, out)
		}
		return jobs
	}
	t.Fatalf("acct --jobs lacks %s:\n%s", name, out)
	return nil
}

// A pod group in the kube-scheduler log is one job of as many tasks as it
// had pods, submitted when its first pod was created.
func TestAcctJobsFromKubeLog(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	lines := []kube.Record{
		{Event: "start", Time: t0.Add(time.Minute), Pod: "ml/a-0", Group: "ml/a", Tenant: "ml", GPUs: 8, WaitSeconds: 60},
		{Event: "start", Time: t0.Add(time.Minute), Pod: "ml/a-1", Group: "ml/a", Tenant: "ml", GPUs: 8, WaitSeconds: 50},
		{Event: "start", Time: t0.Add(2 * time.Minute), Pod: "web/b", Tenant: "web", GPUs: 0.5, WaitSeconds: 90},
		{Event: "end", Time: t0.Add(61 * time.Minute), Pod: "ml/a-0", Group: "ml/a", Tenant: "ml", GPUs: 8, RunSeconds: 3600, Phase: "Succeeded"},
		{Event: "end", Time: t0.Add(61 * time.Minute), Pod: "ml/a-1", Group: "ml/a", Tenant: "ml", GPUs: 8, RunSeconds: 3600, Phase: "Succeeded"},
		{Event: "start", Time: t0.Add(3 * time.Minute), Pod: "web/never-ends", Tenant: "web", GPUs: 1},
	}
	path := filepath.Join(t.TempDir(), "acct.jsonl")
	var b strings.Builder
	for _, l := range lines {
		data, _ := json.Marshal(l)
		b.Write(append(data, '\n'))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "acct", "--kube-log", path, "--jobs")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	jobs := checkAcctJobs(t, out, "ml/a", 0)
	if n := len(jobs.Workload.Arrivals); n != 1 {
		t.Fatalf("%d jobs, want 1 (web/b and web/never-ends never ended):\n%s", n, out)
	}
	a := jobs.Workload.Arrivals[0]
	if g := a.Job.Groups[0]; g.Count != 2 || g.Task.GPUs != 8 || a.Job.Tenant != "ml" || a.Duration != time.Hour {
		t.Errorf("ml/a: %+v tenant %s duration %v, want 2 tasks of 8 GPUs for an hour", g, a.Job.Tenant, a.Duration)
	}
	if o := jobs.Outcomes["ml/a"]; o.Start != time.Minute {
		t.Errorf("ml/a started %v after submission, want 1m (its first pod was created at t0)", o.Start)
	}
}

func TestSimRecordedWorkloads(t *testing.T) {
	tests := []struct {
		args []string
		want []string
		code int
	}{
		{[]string{"sim", "--workload", "jobs", "../../internal/workload/testdata/jobs.csv", "--nodes", "2", "--policies", "corral,slurm-like"},
			[]string{"jobs workload", "3 jobs on 2 nodes", "slurm-like"}, 0},
		{[]string{"sim", "--workload", "sacct", "../../internal/workload/testdata/sacct.txt", "--nodes", "2", "--policies", "kueue-like"},
			[]string{"1 steps, 1 never started, 1 still running skipped", "3 jobs on 2 nodes", "kueue-like"}, 0},
		{[]string{"sim", "--workload", "jobs"}, []string{"--workload jobs needs a file"}, 1},
		// A history that does not say where it ran is not replayed on a guess.
		{[]string{"sim", "--workload", "jobs", "../../internal/workload/testdata/jobs.csv"},
			[]string{`jobs.csv does not say which machines its jobs ran on (corral acct --jobs writes a "# fleet:" line): give --fleet FILE or --nodes N`}, 2},
		{[]string{"sim", "--workload", "sacct", "../../internal/workload/testdata/sacct.txt"}, []string{"give --fleet FILE or --nodes N"}, 2},
		{[]string{"sim", "--workload", "jobs", "testdata/ran-on.csv", "--policies", "corral"},
			[]string{"(on the machines it ran on: 2 node(s) of 4 L4 (2 time slices each)): 2 jobs on 2 nodes, 8 GPUs"}, 0},
		{[]string{"sim", "--workload", "jobs", "testdata/ran-on.csv", "--nodes", "3", "--policies", "corral"},
			[]string{"ran-on.csv: 2 jobs on 3 nodes, 24 GPUs"}, 0},
		{[]string{"sim", "--workload", "jobs", "testdata/ran-on-bad.csv"}, []string{`ran-on-bad.csv:2: fleet line: unknown key "gpus" (known: nodes, gpus_per_node`}, 1},
		{[]string{"sim", "--workload", "sacct", "../../internal/workload/testdata/jobs.csv"}, []string{"jobs.csv:1: no JobID"}, 1},
	}
	for _, tt := range tests {
		out, errOut, code := runCLI(t, tt.args...)
		if code != tt.code {
			t.Errorf("%v: exit %d, want %d: %s", tt.args, code, tt.code, errOut)
		}
		for _, w := range tt.want {
			if !strings.Contains(out+errOut, w) {
				t.Errorf("%v: output lacks %q:\n%s%s", tt.args, w, out, errOut)
			}
		}
	}
}

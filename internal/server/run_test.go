package server

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

func TestSubmitRunLogsExitCodeAndAccounting(t *testing.T) {
	h := newHarness(t, 8)
	alice := h.tenant("alice", 0)
	j := h.submit(alice, api.JobRequest{Name: "hello", Command: sh(`echo hello from corral; echo "gpus=$CUDA_VISIBLE_DEVICES"; sleep 0.3; exit 3`), GPUs: 2})
	done := h.waitState(alice, j.ID, store.Failed, 20*time.Second)
	if done.ExitCode == nil || *done.ExitCode != 3 {
		t.Fatalf("exit code %v, want 3", done.ExitCode)
	}
	if len(done.Tasks) != 1 || len(done.Tasks[0].GPUs) != 2 || done.Tasks[0].PID == 0 {
		t.Fatalf("tasks %+v: want one task on 2 GPUs with a pid", done.Tasks)
	}
	out := h.logs(alice, j.ID, 0)
	want := fmt.Sprintf("gpus=%d,%d", done.Tasks[0].GPUs[0], done.Tasks[0].GPUs[1])
	if !strings.Contains(out, "hello from corral") || !strings.Contains(out, want) {
		t.Fatalf("log %q: want the greeting and %s", out, want)
	}
	acct, err := alice.Acct(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(acct.Records) != 1 {
		t.Fatalf("records %+v: want one", acct.Records)
	}
	r := acct.Records[0]
	if r.Job != j.ID || r.Tenant != "alice" || r.State != "failed" || r.ExitCode != 3 || r.GPUs != 2 || r.GPUModel != "H100-80GB" {
		t.Fatalf("record %+v", r)
	}
	if r.GPUSeconds < 2*0.3 || r.GPUSeconds > 2*15 {
		t.Fatalf("gpu-seconds %v for a 0.3 s run on 2 GPUs", r.GPUSeconds)
	}
	var csv strings.Builder
	if err := alice.AcctCSV(context.Background(), url.Values{}, &csv); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(csv.String()), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], j.ID+",alice,hello,1,H100-80GB") {
		t.Fatalf("csv:\n%s", csv.String())
	}
}

func TestGangOfFourGetsDisjointGPUsAndRanks(t *testing.T) {
	h := newHarness(t, 8)
	c := h.tenant("team", 0)
	j := h.submit(c, api.JobRequest{Command: sh(`echo "RANK=$RANK WORLD_SIZE=$WORLD_SIZE LOCAL_RANK=$LOCAL_RANK CUDA=$CUDA_VISIBLE_DEVICES MASTER=$MASTER_ADDR:$MASTER_PORT"`), GPUs: 2, Tasks: 4})
	done := h.waitState(c, j.ID, store.Succeeded, 20*time.Second)
	if len(done.Tasks) != 4 {
		t.Fatalf("%d tasks, want 4", len(done.Tasks))
	}
	seen := map[int]bool{}
	var master string
	for rank, task := range done.Tasks {
		if len(task.GPUs) != 2 {
			t.Fatalf("rank %d has GPUs %v, want 2", rank, task.GPUs)
		}
		for _, g := range task.GPUs {
			if seen[g] {
				t.Fatalf("GPU %d given to two ranks: %+v", g, done.Tasks)
			}
			seen[g] = true
		}
		out := h.logs(c, j.ID, rank)
		want := fmt.Sprintf("RANK=%d WORLD_SIZE=4 LOCAL_RANK=%d CUDA=%d,%d MASTER=127.0.0.1:", rank, rank, task.GPUs[0], task.GPUs[1])
		if !strings.Contains(out, want) {
			t.Fatalf("rank %d log %q, want %q", rank, out, want)
		}
		m := out[strings.Index(out, "MASTER="):]
		if master != "" && m != master {
			t.Fatalf("ranks disagree on the master: %q vs %q", m, master)
		}
		master = m
	}
}

func TestPreemptionSendsSIGTERMAndHonoursGrace(t *testing.T) {
	h := newHarness(t, 4)
	c := h.tenant("team", 0)
	h.allowPriority("team", 10)
	// The low-priority job needs 0.5 s after SIGTERM to save its work.
	low := h.submit(c, api.JobRequest{Name: "low", Priority: 1, GPUs: 4, Grace: "10s",
		Command: sh(`trap 'echo got TERM; sleep 0.5; echo checkpoint saved; exit 0' TERM; echo started; while :; do sleep 0.05; done`)})
	h.wait(c, low.ID, 20*time.Second, "logging", func(j api.Job) bool {
		return j.State == "running" && strings.Contains(h.logs(c, j.ID, 0), "started")
	})
	high := h.submit(c, api.JobRequest{Name: "high", Priority: 10, GPUs: 4, Command: sh("echo high ran")})
	// The preempted state lasts only until the next cycle restarts the job:
	// its record says how the first attempt ended.
	h.waitState(c, high.ID, store.Succeeded, 20*time.Second)
	again := h.wait(c, low.ID, 20*time.Second, "restarted", func(j api.Job) bool { return j.Attempts == 2 && j.State == "running" })
	if again.Attempts != 2 {
		t.Fatal("not restarted")
	}
	acct, err := h.admin.Acct(context.Background(), url.Values{"tenant": {"team"}})
	if err != nil {
		t.Fatal(err)
	}
	var first *api.Record
	for i := range acct.Records {
		if acct.Records[i].Job == low.ID && acct.Records[i].Attempt == 1 {
			first = &acct.Records[i]
		}
	}
	if first == nil || first.State != "preempted" || first.ExitCode != 0 || first.Signal != "" {
		t.Fatalf("first attempt of the preempted job: %+v; want preempted, exit 0 after its grace period", first)
	}
	// The log of the first attempt shows that the grace period was used.
	h.srv.mu.Lock()
	j := h.srv.runs[mustID(t, low.ID)].job
	h.srv.mu.Unlock()
	j.Attempts = 1
	data := readFile(t, h.srv.logPath(&j, 0, ".out"))
	if !strings.Contains(data, "got TERM") || !strings.Contains(data, "checkpoint saved") {
		t.Fatalf("first attempt's log %q: want SIGTERM and the checkpoint within the grace period", data)
	}
}

func TestGraceEndsInSIGKILL(t *testing.T) {
	h := newHarness(t, 2)
	c := h.tenant("team", 0)
	stubborn := h.submit(c, api.JobRequest{GPUs: 2, Grace: "1s", Command: sh(`trap 'echo ignoring TERM' TERM; echo started; while :; do sleep 0.05; done`)})
	h.wait(c, stubborn.ID, 20*time.Second, "logging", func(j api.Job) bool {
		return j.State == "running" && strings.Contains(h.logs(c, j.ID, 0), "started")
	})
	begin := time.Now()
	if _, err := c.Cancel(context.Background(), stubborn.ID); err != nil {
		t.Fatal(err)
	}
	done := h.waitState(c, stubborn.ID, store.Cancelled, 20*time.Second)
	took := time.Since(begin)
	if took < 900*time.Millisecond {
		t.Fatalf("killed after %v, before its 1 s grace period", took)
	}
	if done.Tasks[0].Signal != "SIGKILL" {
		t.Fatalf("task ended with %+v, want SIGKILL after the grace period", done.Tasks[0])
	}
}

func TestCancelWaitingJob(t *testing.T) {
	h := newHarness(t, 1)
	c := h.tenant("team", 0)
	blocker := h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"sleep", "30"}})
	h.waitState(c, blocker.ID, store.Running, 20*time.Second)
	queued := h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"true"}})
	ex, err := c.Explain(context.Background(), queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ex.State != "pending" || len(ex.Reasons) == 0 {
		t.Fatalf("explain %+v: want pending with reasons", ex)
	}
	// The one machine's GPU is taken: the core's code, counted.
	if want := []api.NodeCount{{Reason: "gpus", Nodes: 1}}; !reflect.DeepEqual(ex.Filtered, want) {
		t.Errorf("explain filtered %+v, want %+v", ex.Filtered, want)
	}
	got, err := c.Cancel(context.Background(), queued.ID)
	if err != nil || got.State != "cancelled" {
		t.Fatalf("cancel: %+v, %v", got, err)
	}
	if _, err := c.Cancel(context.Background(), queued.ID); err == nil {
		t.Fatal("cancelling an ended job again succeeded")
	}
	c.Cancel(context.Background(), blocker.ID)
	h.waitState(c, blocker.ID, store.Cancelled, 20*time.Second)
}

func TestTimeLimitStopsJob(t *testing.T) {
	h := newHarness(t, 1)
	c := h.tenant("team", 0)
	j := h.submit(c, api.JobRequest{GPUs: 1, Time: "1s", Grace: "1s", Command: []string{"sleep", "30"}})
	done := h.waitState(c, j.ID, store.Failed, 20*time.Second)
	if !strings.Contains(done.Reason, "time limit") {
		t.Fatalf("reason %q, want the time limit", done.Reason)
	}
}

func TestQuotaKeepsTenantWithinItsGPUs(t *testing.T) {
	h := newHarness(t, 4)
	c := h.tenant("small", 1)
	if _, err := c.Submit(context.Background(), api.JobRequest{GPUs: 2, Command: []string{"true"}}); err == nil || !strings.Contains(err.Error(), "can never hold more than 1 GPU;") {
		t.Fatalf("a job larger than the quota: %v, want a refusal", err)
	}
	first := h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"sleep", "30"}})
	second := h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"true"}})
	h.waitState(c, first.ID, store.Running, 20*time.Second)
	time.Sleep(300 * time.Millisecond) // several cycles
	jobs, err := c.Jobs(context.Background(), url.Values{"state": {"pending"}})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(jobs, func(j api.Job) bool { return j.ID == second.ID })
	if i < 0 || !strings.Contains(jobs[i].Reason, ReasonQuota) {
		t.Fatalf("pending jobs %+v: want %s waiting for quota", jobs, second.ID)
	}
	c.Cancel(context.Background(), first.ID)
	h.waitState(c, second.ID, store.Succeeded, 20*time.Second)
}

func mustID(t *testing.T, s string) uint64 {
	id, err := store.ParseID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestExplainEstimatesStartFromTimeLimits(t *testing.T) {
	h := newHarness(t, 2)
	c := h.tenant("team", 0)
	long := h.submit(c, api.JobRequest{GPUs: 1, Time: "2h", Command: []string{"sleep", "60"}})
	short := h.submit(c, api.JobRequest{GPUs: 1, Time: "1h", Command: []string{"sleep", "60"}})
	rl := h.waitState(c, long.ID, store.Running, 20*time.Second)
	rs := h.waitState(c, short.ID, store.Running, 20*time.Second)
	one := h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"true"}})
	two := h.submit(c, api.JobRequest{GPUs: 2, Command: []string{"true"}})
	for _, tc := range []struct {
		id   string
		want time.Time
	}{
		{one.ID, rs.Started.Add(time.Hour)},     // the first GPU frees when the short job ends
		{two.ID, rl.Started.Add(2 * time.Hour)}, // both only when the long one ends too
	} {
		ex, err := c.Explain(context.Background(), tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if ex.EstimatedStart == nil || !ex.EstimatedStart.Equal(tc.want) {
			t.Errorf("%s: estimated start %v, want %v (%+v)", tc.id, ex.EstimatedStart, tc.want, ex)
		}
	}
}

package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/eligible"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

// span is when one task ran, as it wrote it.
type span struct{ start, end int64 }

// spans reads the "START END" nanosecond pairs tasks wrote into dir, one
// file each.
func spans(t *testing.T, dir string) map[string]span {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]span{}
	for _, e := range entries {
		f := strings.Fields(readFile(t, filepath.Join(dir, e.Name())))
		if len(f) != 2 {
			t.Fatalf("%s: %q; want START END", e.Name(), f)
		}
		a, _ := strconv.ParseInt(f[0], 10, 64)
		b, _ := strconv.ParseInt(f[1], 10, 64)
		out[e.Name()] = span{a, b}
	}
	return out
}

// mostAtOnce is the most spans that overlap at one instant.
func mostAtOnce(s map[string]span) int {
	type event struct {
		at    int64
		delta int
	}
	var ev []event
	for _, x := range s {
		ev = append(ev, event{x.start, 1}, event{x.end, -1})
	}
	slices.SortFunc(ev, func(a, b event) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.delta - b.delta // an end before a start at the same instant
	})
	most, now := 0, 0
	for _, e := range ev {
		now += e.delta
		most = max(most, now)
	}
	return most
}

// recorder is a task that writes when it started and ended into
// dir/NAME, sleeping in between.
func recorder(dir, name, sleep string) []string {
	return sh(`s=$(date +%s%N); sleep ` + sleep + `; printf '%s %s\n' "$s" "$(date +%s%N)" > ` + dir + "/" + name)
}

// TestArrayThrottleNeverRunsMoreThanItsLimit submits a 100-task array
// with %10 in one call: every index runs once with its index and the
// array's ID in its environment, the tasks' own records never overlap
// more than 10 at once, and the queue never shows more than 10 running.
func TestArrayThrottleNeverRunsMoreThanItsLimit(t *testing.T) {
	h := newHarness(t, 1)
	c := h.tenant("alice", 0)
	dir := t.TempDir()
	begin := time.Now()
	first := h.submit(c, api.JobRequest{Array: "0-99%10", CPU: 0.01, MemoryMiB: 16,
		Command: recorder(dir, `"$SLURM_ARRAY_JOB_ID-$SLURM_ARRAY_TASK_ID-$CORRAL_ARRAY_TASK_ID"`, "1")})
	submitted := time.Since(begin)
	if first.ArrayTasks != 100 || first.ArrayID != first.ID+"_0" {
		t.Fatalf("submission: %d tasks, first %q; want 100 tasks, %s_0", first.ArrayTasks, first.ArrayID, first.ID)
	}
	most := 0
	for deadline := time.Now().Add(90 * time.Second); ; {
		jobs, err := c.Jobs(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		running, done := 0, 0
		for _, j := range jobs {
			switch j.State {
			case "running":
				running++
			case "succeeded":
				done++
			case "pending":
				if j.PendingReason == "" {
					t.Fatalf("waiting task %s shows no pending reason", j.ArrayID)
				}
			}
		}
		most = max(most, running)
		if done == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 100 tasks done after 90 s", done)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ran := spans(t, dir)
	arrayID := strings.TrimLeft(strings.TrimPrefix(first.ID, "j"), "0")
	for i := range 100 {
		if _, ok := ran[arrayID+"-"+strconv.Itoa(i)+"-"+strconv.Itoa(i)]; !ok {
			t.Errorf("index %d did not run with SLURM_ARRAY_JOB_ID=%s and its index", i, arrayID)
		}
	}
	// Each task runs a second, so that a start rate of a few a second (a
	// CI machine busy with other tests: 0.3 s tasks overlapped only 4 at
	// once there) still shows the limit reached rather than a trickle.
	at := mostAtOnce(ran)
	if at > 10 || at < 5 || most > 10 {
		t.Errorf("the tasks ran %d at once by their own clocks, %d by the queue; want at most 10 (and the limit reached, not a trickle)", at, most)
	}
	t.Logf("100 tasks submitted in %v, all done after %v; at most %d at once by the tasks' clocks, %d running in the queue", submitted, time.Since(begin), at, most)
}

// TestDependencyChainRunsInOrder: b after a, c after b (afterok), each
// waits with Dependency while the one before runs, and they run in
// order.
func TestDependencyChainRunsInOrder(t *testing.T) {
	h := newHarness(t, 2)
	c := h.tenant("alice", 0)
	dir := t.TempDir()
	a := h.submit(c, api.JobRequest{Command: recorder(dir, "a", "0.5")})
	b := h.submit(c, api.JobRequest{Dependency: "afterok:" + a.ID, Command: recorder(dir, "b", "0.5")})
	cc := h.submit(c, api.JobRequest{Dependency: "afterok:" + strings.TrimPrefix(b.ID, "j"), Command: recorder(dir, "c", "0.5")})
	h.waitState(c, a.ID, store.Running, 20*time.Second)
	if j := h.wait(c, b.ID, 5*time.Second, "Dependency", func(j api.Job) bool { return j.PendingReason == eligible.Waiting }); !strings.Contains(j.Reason, "afterok:"+a.ID) {
		t.Errorf("b waits with %q; want the reason to name afterok:%s", j.Reason, a.ID)
	}
	h.waitState(c, cc.ID, store.Succeeded, 30*time.Second)
	ran := spans(t, dir)
	if !(ran["a"].end <= ran["b"].start && ran["b"].end <= ran["c"].start) {
		t.Errorf("ran a %v, b %v, c %v; want each after the one before ended", ran["a"], ran["b"], ran["c"])
	}
}

// TestAfterOKOnAFailedJobNeverRuns: a job afterok a failed one waits
// with DependencyNeverSatisfied and never starts; with
// kill_on_invalid_dep it is cancelled; afternotok and afterany run.
func TestAfterOKOnAFailedJobNeverRuns(t *testing.T) {
	h := newHarness(t, 2)
	c := h.tenant("alice", 0)
	failed := h.submit(c, api.JobRequest{Command: sh("exit 3")})
	never := h.submit(c, api.JobRequest{Dependency: "afterok:" + failed.ID, Command: []string{"true"}})
	killed := h.submit(c, api.JobRequest{Dependency: "afterok:" + failed.ID, KillOnInvalidDep: true, Command: []string{"true"}})
	notOK := h.submit(c, api.JobRequest{Dependency: "afternotok:" + failed.ID, Command: []string{"true"}})
	anyway := h.submit(c, api.JobRequest{Dependency: "afterany:" + failed.ID, Command: []string{"true"}})
	h.waitState(c, failed.ID, store.Failed, 20*time.Second)
	for _, j := range []api.Job{notOK, anyway} {
		h.waitState(c, j.ID, store.Succeeded, 20*time.Second)
	}
	k := h.waitState(c, killed.ID, store.Cancelled, 20*time.Second)
	if !strings.Contains(k.Reason, eligible.NeverSatisfied) {
		t.Errorf("killed: reason %q; want it to say %s", k.Reason, eligible.NeverSatisfied)
	}
	j := h.wait(c, never.ID, 10*time.Second, "never satisfied", func(j api.Job) bool { return j.PendingReason == eligible.NeverSatisfied })
	h.waitCycle()
	if j, _ = c.Job(context.Background(), never.ID); j.State != "pending" || j.Attempts != 0 || !strings.Contains(j.Reason, failed.ID+" failed") {
		t.Errorf("afterok on a failed job: %s after %d starts, %q; want pending, never started, saying %s failed", j.State, j.Attempts, j.Reason, failed.ID)
	}
	e, err := c.Explain(context.Background(), never.ID)
	if err != nil || !strings.Contains(e.Summary, eligible.NeverSatisfied) {
		t.Errorf("explain: %q, %v; want %s", e.Summary, err, eligible.NeverSatisfied)
	}
	if _, err := c.Submit(context.Background(), api.JobRequest{Dependency: "afterok:j999999", Command: []string{"true"}}); err == nil || !strings.Contains(err.Error(), "no job j999999") {
		t.Errorf("a dependency on no job: %v; want it refused", err)
	}
}

// TestSingletonRunsOneAtATime: jobs of one name and tenant with
// --dependency singleton run one after another; another name does not
// wait for them.
func TestSingletonRunsOneAtATime(t *testing.T) {
	h := newHarness(t, 4)
	c := h.tenant("alice", 0)
	dir := t.TempDir()
	var last api.Job
	for i := range 3 {
		last = h.submit(c, api.JobRequest{Name: "nightly", Dependency: "singleton", Command: recorder(dir, "n"+strconv.Itoa(i), "0.4")})
	}
	other := h.submit(c, api.JobRequest{Name: "other", Dependency: "singleton", Command: recorder(dir, "other", "0.4")})
	h.waitState(c, last.ID, store.Succeeded, 30*time.Second)
	h.waitState(c, other.ID, store.Succeeded, 30*time.Second)
	ran := spans(t, dir)
	other0 := ran["other"]
	delete(ran, "other")
	if n := mostAtOnce(ran); n != 1 {
		t.Errorf("%d singletons of one name ran at once; want 1", n)
	}
	if other0.start > ran["n1"].start {
		t.Errorf("the singleton of another name waited for nightly")
	}
}

// restart stops h's server and starts another on the same store and
// state directory, as a server that was stopped and started again.
func restart(t *testing.T, h *harness) *harness {
	t.Helper()
	h.srv.Close()
	h.srv.Wait()
	srv, err := New(Config{Store: h.st, GPUs: fakeGPUs(len(h.srv.gpus)), StateDir: h.srv.cfg.StateDir, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return startHarness(t, srv, h.st)
}

// TestHoldAndBeginSurviveARestart: a job submitted held, one held while
// it waits and one that begins in an hour keep their reasons across a
// restart; released (or its begin cleared), each runs.
func TestHoldAndBeginSurviveARestart(t *testing.T) {
	h := newHarness(t, 1)
	c := h.tenant("alice", 0)
	ctx := context.Background()
	held := h.submit(c, api.JobRequest{Hold: true, Command: []string{"true"}})
	block := h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"sleep", "30"}})
	later := h.submit(c, api.JobRequest{Begin: "now+1hour", Command: []string{"true"}})
	h.waitState(c, block.ID, store.Running, 20*time.Second)
	waiting := h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"true"}})
	if _, err := c.Hold(ctx, waiting.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Hold(ctx, block.ID); err == nil || !strings.Contains(err.Error(), "409") {
		t.Errorf("holding a running job: %v; want 409", err)
	}
	want := map[string]string{held.ID: eligible.Held, waiting.ID: eligible.Held, later.ID: eligible.BeginTime}
	check := func(h *harness, c *client.Client) {
		t.Helper()
		for id, reason := range want {
			h.wait(c, id, 10*time.Second, reason, func(j api.Job) bool { return j.PendingReason == reason && j.State == "pending" })
		}
	}
	check(h, c)
	if _, err := c.Cancel(ctx, block.ID); err != nil {
		t.Fatal(err)
	}
	h.waitState(c, block.ID, store.Cancelled, 20*time.Second)
	h = restart(t, h)
	c = &client.Client{Server: h.url, Token: c.Token}
	check(h, c)
	for _, id := range []string{held.ID, waiting.ID} {
		if _, err := c.Release(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	empty := ""
	if _, err := c.Update(ctx, later.ID, api.JobUpdate{Begin: &empty}); err != nil {
		t.Fatal(err)
	}
	for id := range want {
		h.waitState(c, id, store.Succeeded, 20*time.Second)
	}
}

// TestRequeueAndUpdate: a running job requeued ends its attempt
// REQUEUED and runs again; requeued with hold it waits held; an ended
// job requeued runs again; a waiting job's time limit, priority and name
// change, a running one's do not.
func TestRequeueAndUpdate(t *testing.T) {
	h := newHarness(t, 1)
	c := h.tenant("alice", 0)
	ctx := context.Background()
	dir := t.TempDir()
	j := h.submit(c, api.JobRequest{GPUs: 1, Command: sh(`echo x >> ` + dir + `/runs; sleep 30`)})
	h.waitState(c, j.ID, store.Running, 20*time.Second)
	waiting := h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"true"}})
	name, limit := "renamed", "1:00:00"
	upd, err := c.Update(ctx, waiting.ID, api.JobUpdate{Name: &name, Time: &limit})
	if err != nil || len(upd) != 1 || upd[0].Request.Name != "renamed" || upd[0].Request.Time != "1h0m0s" {
		t.Fatalf("update: %+v, %v", upd, err)
	}
	later := "now+1hour"
	if _, err := c.Update(ctx, j.ID, api.JobUpdate{Begin: &later}); err == nil || !strings.Contains(err.Error(), "409") {
		t.Errorf("a begin time on a running job: %v; want 409", err)
	}
	if _, err := c.Hold(ctx, waiting.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Requeue(ctx, j.ID, false); err != nil {
		t.Fatal(err)
	}
	again := h.wait(c, j.ID, 30*time.Second, "running again", func(j api.Job) bool { return j.State == "running" && j.Attempts == 2 })
	if again.Attempts != 2 {
		t.Fatalf("attempts %d", again.Attempts)
	}
	if _, err := c.Requeue(ctx, j.ID, true); err != nil {
		t.Fatal(err)
	}
	h.wait(c, j.ID, 30*time.Second, "held after requeue", func(j api.Job) bool { return j.State == "pending" && j.PendingReason == eligible.Held })
	acct, err := c.Acct(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	requeued := 0
	for _, r := range acct.Records {
		if r.Job == j.ID && r.SlurmState == store.OutcomeRequeued {
			requeued++
		}
	}
	if requeued != 2 {
		t.Errorf("%d attempts of %s recorded REQUEUED; want 2", requeued, j.ID)
	}
	if _, err := c.Release(ctx, waiting.ID); err != nil {
		t.Fatal(err)
	}
	h.waitState(c, waiting.ID, store.Succeeded, 20*time.Second)
	if _, err := c.Requeue(ctx, waiting.ID, false); err != nil {
		t.Fatal(err)
	}
	h.wait(c, waiting.ID, 20*time.Second, "run again", func(j api.Job) bool { return j.State == "succeeded" && j.Attempts == 2 })
	if runs := readFile(t, filepath.Join(dir, "runs")); runs != "x\nx\n" {
		t.Errorf("the requeued job ran %q; want twice before it was held", runs)
	}
}

// An array beyond the server's --max-array-size (Slurm's MaxArraySize,
// 1001 by default) is refused with the limit named; a server whose admin
// raised it takes 10,000 tasks in one call.
func TestArraySizeIsTheAdminsLimit(t *testing.T) {
	h := newHarness(t, 1)
	c := h.tenant("alice", 0)
	_, err := c.Submit(context.Background(), api.JobRequest{Array: "0-1500", Hold: true, Command: []string{"true"}})
	if !isStatus(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "at most 1001 tasks an array: its --max-array-size") {
		t.Errorf("1,501 tasks on a default server: %v, want 400 naming the limit", err)
	}
	dir, st := tempStore(t)
	srv, err := New(Config{Store: st, GPUs: fakeGPUs(1), StateDir: filepath.Join(dir, "tasks"), Interval: 100 * time.Millisecond, MaxArrayTasks: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	big := startHarness(t, srv, st)
	j := big.submit(big.tenant("bob", 0), api.JobRequest{Array: "0-9999%10", Hold: true, Command: []string{"true"}})
	if j.ArrayTasks != 10_000 {
		t.Errorf("10,000 tasks under --max-array-size 10000: %d made", j.ArrayTasks)
	}
}

// TestAfterWithADelayWaitsItsMinutes: after:A+2 waits while A runs its
// first two minutes (the server's clock is moved, not slept), saying
// when the delay ends, and starts once they have passed, with A still
// running.
func TestAfterWithADelayWaitsItsMinutes(t *testing.T) {
	var shift atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
	dir, st := tempStore(t)
	srv, err := New(Config{Store: st, GPUs: fakeGPUs(2), StateDir: filepath.Join(dir, "tasks"), Interval: 100 * time.Millisecond, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, srv, st)
	c := h.tenant("alice", 0)
	a := h.submit(c, api.JobRequest{Command: []string{"sleep", "60"}})
	b := h.submit(c, api.JobRequest{Dependency: "after:" + a.ID + "+2", Command: []string{"true"}})
	if b.Request.Dependency != "after:"+a.ID+"+2" {
		t.Errorf("b's dependency reads %q; want after:%s+2", b.Request.Dependency, a.ID)
	}
	h.waitState(c, a.ID, store.Running, 20*time.Second)
	j := h.wait(c, b.ID, 5*time.Second, "its delay", func(j api.Job) bool {
		return j.PendingReason == eligible.Waiting && strings.Contains(j.Reason, "2-minute delay ends at")
	})
	h.waitCycle()
	if j, _ = c.Job(context.Background(), b.ID); j.State != "pending" {
		t.Fatalf("b is %s before its delay ended; want pending", j.State)
	}
	shift.Store(int64(2*time.Minute + time.Second))
	h.waitState(c, b.ID, store.Succeeded, 20*time.Second)
	if j, _ := c.Job(context.Background(), a.ID); j.State != "running" {
		t.Errorf("a is %s; want it still running: after waits for a's start, not its end", j.State)
	}
	if _, err := c.Submit(context.Background(), api.JobRequest{Dependency: "afterok:" + a.ID + "+2", Command: []string{"true"}}); err == nil || !strings.Contains(err.Error(), "after only") {
		t.Errorf("afterok with a delay: %v; want it refused, as sbatch refuses it", err)
	}
}

// TestUpdateRunningJobsTimeLimit: as scontrol update, a tenant lowers a
// running job's time limit (it times out at the new one) but may not
// raise it; an admin raises one (it outlives its old limit); a running
// job takes a new name, not a new begin time or priority.
func TestUpdateRunningJobsTimeLimit(t *testing.T) {
	h := newHarness(t, 2)
	c := h.tenant("alice", 0)
	ctx := context.Background()
	lowered := h.submit(c, api.JobRequest{Time: "1:00:00", Command: []string{"sleep", "60"}})
	raised := h.submit(c, api.JobRequest{Time: "0:00:03", Command: []string{"sleep", "60"}})
	h.waitState(c, lowered.ID, store.Running, 20*time.Second)
	h.waitState(c, raised.ID, store.Running, 20*time.Second)

	hour, twoSeconds := "2:00:00", "0:00:02"
	if _, err := c.Update(ctx, lowered.ID, api.JobUpdate{Time: &hour}); err == nil || !strings.Contains(err.Error(), "may only lower") {
		t.Errorf("a tenant raising its running job's limit: %v; want 403 saying it may only lower it", err)
	}
	name := "shorter"
	upd, err := c.Update(ctx, lowered.ID, api.JobUpdate{Time: &twoSeconds, Name: &name})
	if err != nil || len(upd) != 1 || upd[0].Request.Time != "2s" || upd[0].Request.Name != name || upd[0].State != "running" {
		t.Fatalf("lowering a running job's limit: %+v, %v", upd, err)
	}
	if _, err := h.admin.Update(ctx, raised.ID, api.JobUpdate{Time: &hour}); err != nil {
		t.Fatalf("an admin raising a running job's limit: %v", err)
	}
	j := h.waitState(c, lowered.ID, store.Failed, 20*time.Second)
	if j.SlurmState != "TIMEOUT" || !strings.Contains(j.Reason, "time limit 2s") {
		t.Errorf("lowered: %s %q; want TIMEOUT at its new limit of 2s", j.SlurmState, j.Reason)
	}
	if j.Started != nil && j.Ended != nil && j.Ended.Sub(*j.Started) > 30*time.Second {
		t.Errorf("lowered ran %v; want about 2s", j.Ended.Sub(*j.Started))
	}
	time.Sleep(3 * time.Second) // past raised's old limit of 3s
	if j, _ := c.Job(ctx, raised.ID); j.State != "running" || j.Request.Time != "2h0m0s" {
		t.Errorf("raised: %s with limit %s; want running past its old limit, with 2h", j.State, j.Request.Time)
	}
	later := "now+1hour"
	if _, err := c.Update(ctx, raised.ID, api.JobUpdate{Begin: &later}); err == nil || !strings.Contains(err.Error(), "409") {
		t.Errorf("a begin time on a running job: %v; want 409", err)
	}
}

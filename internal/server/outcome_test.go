package server

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// TestEndTimeComesFromExitRecord: a job whose task ended while the server
// was down ended when its exit record says, and is charged until then,
// not until the restart; a job whose task vanished exits -1 as NODE_FAIL.
func TestEndTimeComesFromExitRecord(t *testing.T) {
	dir, st := tempStore(t)
	started := time.Now().Add(-2 * time.Hour).UTC().Truncate(time.Second)
	exited := started.Add(3 * time.Minute)
	mk := func(gpu int) uint64 {
		j, err := st.Submit("team", store.Spec{Command: []string{"true"}, GPUs: 1, Tasks: 1}, started)
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.UpdateJob(j.ID, func(j *store.Job) error {
			j.State, j.Attempts, j.Started, j.GPUModel = store.Running, 1, started, "H100-80GB"
			j.Tasks = []store.Task{{Rank: 0, GPUs: []int{gpu}, Devices: []string{"0"}, PID: 1 << 22}}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	done, vanished := mk(0), mk(1)
	tasks := filepath.Join(dir, "tasks")
	writeExit(t, filepath.Join(tasks, store.FormatID(done), "attempt-1", store.FormatID(done)+"-0.exit"),
		executor.Result{ExitCode: 3, Started: started, Ended: exited})
	srv, err := New(Config{Store: st, GPUs: fakeGPUs(2), StateDir: tasks, Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, srv, st)
	j := h.waitState(h.admin, store.FormatID(done), store.Failed, 20*time.Second)
	if j.Ended == nil || !j.Ended.Equal(exited) || *j.ExitCode != 3 || j.SlurmState != "FAILED" {
		t.Fatalf("ended %v exit %v %s: want %v, exit 3, FAILED", j.Ended, *j.ExitCode, j.SlurmState, exited)
	}
	lost := h.waitState(h.admin, store.FormatID(vanished), store.Failed, 20*time.Second)
	if lost.ExitCode == nil || *lost.ExitCode != -1 || lost.SlurmState != "NODE_FAIL" {
		t.Fatalf("lost job: exit %v, %s: want -1, NODE_FAIL", lost.ExitCode, lost.SlurmState)
	}
	acct, err := h.admin.Acct(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range acct.Records {
		if r.Job == j.ID && (math.Abs(r.GPUSeconds-180) > 1 || r.SlurmState != "FAILED") {
			t.Fatalf("record %+v: want 180 GPU-seconds (start to exit), FAILED", r)
		}
		if r.Job == lost.ID && (r.ExitCode != -1 || r.SlurmState != "NODE_FAIL") {
			t.Fatalf("record %+v: want exit -1, NODE_FAIL", r)
		}
	}
}

func writeExit(t *testing.T, path string, res executor.Result) {
	t.Helper()
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestJobThatDidNotStartNeverExitsZero: a command not found exits 127, a
// file that cannot be executed 126, a missing working directory -1; all
// FAILED, with a reason that says the job did not start.
func TestJobThatDidNotStartNeverExitsZero(t *testing.T) {
	h := newHarness(t, 2)
	c := h.tenant("team", 0)
	plain := filepath.Join(t.TempDir(), "notexec")
	if err := os.WriteFile(plain, []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req  api.JobRequest
		exit int
	}{
		{api.JobRequest{GPUs: 1, Command: []string{"corral-no-such-command"}}, 127},
		{api.JobRequest{GPUs: 1, Command: []string{plain}}, 126},
		{api.JobRequest{GPUs: 1, Command: []string{"true"}, WorkDir: filepath.Join(t.TempDir(), "missing")}, -1},
	} {
		j := h.submit(c, tc.req)
		j = h.waitState(c, j.ID, store.Failed, 20*time.Second)
		if j.ExitCode == nil || *j.ExitCode != tc.exit || j.SlurmState != "FAILED" || !strings.Contains(j.Reason, "did not start") {
			t.Errorf("%v: exit %v, %s, %q: want exit %d, FAILED, did not start", tc.req.Command, ptr(j.ExitCode), j.SlurmState, j.Reason, tc.exit)
		}
	}
}

func ptr(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestSlurmStates: a time limit is TIMEOUT, a cancel CANCELLED, a clean
// exit COMPLETED, beside the API's states; a gang is reported by the rank
// that failed, not by the rank stopped because of it.
func TestSlurmStates(t *testing.T) {
	h := newHarness(t, 4)
	c := h.tenant("team", 0)
	slow := h.submit(c, api.JobRequest{GPUs: 1, Time: "1s", Grace: "100ms", Command: sh("sleep 60")})
	gang := h.submit(c, api.JobRequest{GPUs: 1, Tasks: 2, Command: sh(`[ "$RANK" = 1 ] && { sleep 0.3; exit 4; }; sleep 60`)})
	ok := h.submit(c, api.JobRequest{GPUs: 1, Command: sh("true")})
	j := h.waitState(c, slow.ID, store.Failed, 20*time.Second)
	if j.SlurmState != "TIMEOUT" {
		t.Errorf("time limit: %s (%s), want TIMEOUT", j.SlurmState, j.Reason)
	}
	j = h.waitState(c, gang.ID, store.Failed, 20*time.Second)
	if j.Reason != "rank 1 exited with code 4" || *j.ExitCode != 4 || j.SlurmState != "FAILED" {
		t.Errorf("gang: %q exit %d %s, want rank 1 exited with code 4, exit 4, FAILED", j.Reason, *j.ExitCode, j.SlurmState)
	}
	if j = h.waitState(c, ok.ID, store.Succeeded, 20*time.Second); j.SlurmState != "COMPLETED" {
		t.Errorf("clean exit: %s, want COMPLETED", j.SlurmState)
	}
	long := h.submit(c, api.JobRequest{GPUs: 1, Command: sh("sleep 60")})
	h.waitState(c, long.ID, store.Running, 20*time.Second)
	if j = h.waitState(c, long.ID, store.Running, time.Second); j.SlurmState != "RUNNING" {
		t.Errorf("running: %s", j.SlurmState)
	}
	if _, err := c.Cancel(context.Background(), long.ID); err != nil {
		t.Fatal(err)
	}
	if j = h.waitState(c, long.ID, store.Cancelled, 20*time.Second); j.SlurmState != "CANCELLED" {
		t.Errorf("cancel: %s, want CANCELLED", j.SlurmState)
	}
	acct, err := c.Acct(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range acct.Records {
		if r.Job == slow.ID && r.SlurmState != "TIMEOUT" {
			t.Errorf("record of the timed-out job: %s", r.SlurmState)
		}
		if r.Job == gang.ID && (r.ExitCode != 4 || r.Signal != "") {
			t.Errorf("record of the gang: exit %d signal %q, want 4 and none", r.ExitCode, r.Signal)
		}
	}
}

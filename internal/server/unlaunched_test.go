package server

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// A job whose start was recorded but which was never launched, because
// the server died in between, is requeued by the next server and runs:
// it is not ended NODE_FAIL, and nothing is charged for it.
func TestStartRecordedButNeverLaunchedIsRequeued(t *testing.T) {
	dir, st := tempStore(t)
	cfg := Config{Store: st, GPUs: fakeGPUs(1), StateDir: filepath.Join(dir, "tasks"), Interval: 50 * time.Millisecond}
	first, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The scheduling loop dies right after persisting the start, as the
	// process would if killed there.
	first.startRecorded = func(store.Job) { runtime.Goexit() }
	h1 := startHarness(t, first, st)
	c := h1.tenant("team", 0)
	j := h1.submit(c, api.JobRequest{GPUs: 1, Command: sh("echo done")})
	h1.wait(c, j.ID, 20*time.Second, "recorded as started", func(j api.Job) bool { return j.State == "running" })
	first.Wait()

	second, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h2 := startHarness(t, second, st)
	end := h2.wait(h2.admin, j.ID, 20*time.Second, "ended", func(j api.Job) bool { return store.State(j.State).Final() })
	if end.State != string(store.Succeeded) || end.Attempts != 1 {
		t.Fatalf("the unlaunched job ended %s (%s) after %d attempts; want succeeded after 1", end.State, end.Reason, end.Attempts)
	}
	recs, err := h2.admin.Acct(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs.Records) != 1 || recs.Records[0].SlurmState != "COMPLETED" {
		t.Errorf("accounting: %+v, want the one completed run", recs.Records)
	}
}

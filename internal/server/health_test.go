package server

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

// fakeHealth is a GPU health source the test controls.
type fakeHealth struct {
	mu  sync.Mutex
	bad map[int][]string
}

func (f *fakeHealth) set(bad map[int][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bad = bad
}

func (f *fakeHealth) get() (map[int][]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bad, nil
}

func TestUnhealthyGPUIsDrainedAndItsJobRequeued(t *testing.T) {
	dir, st := tempStore(t)
	health := &fakeHealth{}
	srv, err := New(Config{Store: st, GPUs: fakeGPUs(4), StateDir: filepath.Join(dir, "tasks"),
		Interval: 50 * time.Millisecond, Health: health.get, HealthInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, srv, st)
	c := h.tenant("team", 0)
	a := h.submit(c, api.JobRequest{Name: "a", GPUs: 2, Command: []string{"sleep", "60"}})
	ra := h.waitState(c, a.ID, store.Running, 20*time.Second)
	b := h.submit(c, api.JobRequest{Name: "b", GPUs: 2, Command: []string{"sleep", "60"}})
	rb := h.waitState(c, b.ID, store.Running, 20*time.Second)

	broken := ra.Tasks[0].GPUs[0]
	health.set(map[int][]string{broken: {"3 uncorrected ECC errors"}})
	requeued := h.wait(c, a.ID, 20*time.Second, "requeued", func(j api.Job) bool { return j.State == "pending" && j.Attempts == 1 })
	if requeued.Reason == "" {
		t.Fatal("requeued job without a reason")
	}
	if m := grep(scrape(t, h.url), "corral_jobs_ended_total"); !strings.Contains(m, `{state="requeued"} 1`) || strings.Contains(m, `state="pending"`) {
		t.Errorf("after a requeue the end counter says:\n%s\nwant requeued 1 and no pending", m)
	}
	gpus, err := c.GPUs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := gpus[broken]; g.Healthy || g.Problem == "" || len(g.Jobs) != 0 {
		t.Fatalf("GPU %d after draining: %+v", broken, g)
	}
	if jb, _ := c.Job(context.Background(), b.ID); jb.State != "running" || !slices.Equal(jb.Tasks[0].GPUs, rb.Tasks[0].GPUs) {
		t.Fatalf("job b on healthy GPUs was disturbed: %+v", jb)
	}
	// One GPU is free besides the broken one: a 1-GPU job must not get the broken one.
	small := h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"sleep", "60"}})
	rs := h.waitState(c, small.ID, store.Running, 20*time.Second)
	if rs.Tasks[0].GPUs[0] == broken {
		t.Fatalf("a job was placed on unhealthy GPU %d", broken)
	}
	cancelAll(t, c, small.ID, b.ID)
	h.waitState(c, small.ID, store.Cancelled, 20*time.Second)
	h.waitState(c, b.ID, store.Cancelled, 20*time.Second)

	health.set(nil)
	again := h.wait(c, a.ID, 20*time.Second, "restarted", func(j api.Job) bool { return j.State == "running" && j.Attempts == 2 })
	if len(again.Tasks[0].GPUs) != 2 {
		t.Fatalf("restarted on %v", again.Tasks[0].GPUs)
	}
}

func cancelAll(t *testing.T, c *client.Client, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := c.Cancel(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
}

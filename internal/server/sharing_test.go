package server

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

func TestSharesPackOntoOneGPU(t *testing.T) {
	h := newHarness(t, 2)
	c := h.tenant("notebooks", 0)
	var ids []string
	for range 4 {
		ids = append(ids, h.submit(c, api.JobRequest{Share: 0.25, Command: []string{"sleep", "60"}}).ID)
	}
	var first int = -1
	for _, id := range ids {
		j := h.waitState(c, id, store.Running, 20*time.Second)
		g := j.Tasks[0].GPUs[0]
		if first >= 0 && g != first {
			t.Fatalf("quarter shares spread over GPUs %d and %d; want them packed on one", first, g)
		}
		first = g
	}
	gpus, err := c.GPUs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if gpus[first].Used != 1 || len(gpus[first].Jobs) != 4 {
		t.Fatalf("GPU %d: %+v, want 4 quarter shares", first, gpus[first])
	}
	whole := h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"true"}})
	if j := h.waitState(c, whole.ID, store.Succeeded, 20*time.Second); j.Tasks[0].GPUs[0] == first {
		t.Fatal("a whole-GPU job landed on the shared GPU")
	}
}

func TestMIGSlicesOnMIGMachine(t *testing.T) {
	dir, st := tempStore(t)
	gpus := fakeGPUs(1)
	gpus[0].MIG = true
	srv, err := New(Config{Store: st, GPUs: gpus, StateDir: filepath.Join(dir, "tasks"), Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, srv, st)
	c := h.tenant("team", 0)
	var ids []string
	for range 7 {
		ids = append(ids, h.submit(c, api.JobRequest{MIG: "1g.10gb", Command: sh(`echo "profile=$CORRAL_MIG_PROFILE"; sleep 60`)}).ID)
	}
	for _, id := range ids {
		j := h.waitState(c, id, store.Running, 20*time.Second)
		if j.Tasks[0].MIG != "1g.10gb" {
			t.Fatalf("task %+v: want a 1g.10gb slice", j.Tasks[0])
		}
	}
	eighth := h.submit(c, api.JobRequest{MIG: "1g.10gb", Command: []string{"true"}})
	time.Sleep(300 * time.Millisecond)
	ex, err := c.Explain(context.Background(), eighth.ID)
	if err != nil || ex.State != "pending" {
		t.Fatalf("an eighth 1g slice on one H100: %+v, %v", ex, err)
	}
	if out := h.logs(c, ids[0], 0); !strings.Contains(out, "profile=1g.10gb") {
		t.Fatalf("log %q", out)
	}
	if _, err := c.Submit(context.Background(), api.JobRequest{MIG: "9g.99gb", Command: []string{"true"}}); err == nil {
		t.Fatal("an unknown MIG profile was accepted")
	}
}

// On a GPU whose MIG instances exist (as NVML reports them), each MIG
// task sees exactly one instance: a free one of its profile, by UUID, in
// CUDA_VISIBLE_DEVICES; a task of a profile with no instance left waits.
func TestMIGTasksSeeTheirInstanceUUID(t *testing.T) {
	dir, st := tempStore(t)
	gpus := fakeGPUs(1)
	gpus[0].MIG = true
	for i := range 3 {
		gpus[0].MIGInstances = append(gpus[0].MIGInstances, MIGInstance{UUID: fmt.Sprintf("MIG-test-%d", i), Profile: "1g.10gb"})
	}
	gpus[0].MIGInstances = append(gpus[0].MIGInstances, MIGInstance{UUID: "MIG-test-big", Profile: "3g.40gb"})
	srv, err := New(Config{Store: st, GPUs: gpus, StateDir: filepath.Join(dir, "tasks"), Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, srv, st)
	c := h.tenant("team", 0)
	seen := map[string]bool{}
	for range 3 {
		j := h.submit(c, api.JobRequest{MIG: "1g.10gb", Command: sh(`echo "devices=$CUDA_VISIBLE_DEVICES"; sleep 60`)})
		h.waitState(c, j.ID, store.Running, 20*time.Second)
		out := ""
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out, "devices=") && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			out = h.logs(c, j.ID, 0)
		}
		dev := strings.TrimSpace(strings.TrimPrefix(out, "devices="))
		if !strings.HasPrefix(dev, "MIG-test-") || dev == "MIG-test-big" || seen[dev] {
			t.Fatalf("task sees %q (seen %v): want a 1g.10gb instance of its own", dev, seen)
		}
		seen[dev] = true
	}
	big := h.submit(c, api.JobRequest{MIG: "3g.40gb", Command: sh(`echo "devices=$CUDA_VISIBLE_DEVICES"`)})
	h.waitState(c, big.ID, store.Succeeded, 20*time.Second)
	if out := h.logs(c, big.ID, 0); strings.TrimSpace(out) != "devices=MIG-test-big" {
		t.Errorf("3g.40gb task: %q", out)
	}
}

// TestRestartMarksVanishedJobLostAndRequeues opens a server on a store
// that records a running job whose process is gone: the job is lost, and
// requeued because its spec asks for it.
func TestRestartMarksVanishedJobLostAndRequeues(t *testing.T) {
	dir, st := tempStore(t)
	mk := func(requeue bool) uint64 {
		j, err := st.Submit("team", store.Spec{Command: []string{"true"}, GPUs: 1, Tasks: 1, Requeue: requeue}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.UpdateJob(j.ID, func(j *store.Job) error {
			j.State, j.Attempts, j.Started, j.GPUModel = store.Running, 1, time.Now(), "H100-80GB"
			j.Tasks = []store.Task{{Rank: 0, GPUs: []int{int(j.ID)}, Devices: []string{"0"}, PID: 1 << 22}}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	keep, drop := mk(true), mk(false)
	srv, err := New(Config{Store: st, GPUs: fakeGPUs(4), StateDir: filepath.Join(dir, "tasks"), Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, srv, st)
	j := h.wait(h.admin, store.FormatID(keep), 20*time.Second, "rerun", func(j api.Job) bool { return j.State == "succeeded" && j.Attempts == 2 })
	if j.Attempts != 2 {
		t.Fatal("not rerun")
	}
	lost := h.waitState(h.admin, store.FormatID(drop), store.Failed, 20*time.Second)
	if !strings.Contains(lost.Reason, "lost") {
		t.Fatalf("reason %q, want lost", lost.Reason)
	}
	acct, err := h.admin.Acct(context.Background(), nil)
	if err != nil || len(acct.Records) != 3 {
		t.Fatalf("records %+v, %v: want the two lost runs and the rerun", acct.Records, err)
	}
}

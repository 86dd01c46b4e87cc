package server

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// smallDisk mounts a tmpfs of size (such as "16m") for the test and
// returns its directory; it needs root, and fails without it under
// CORRAL_INTEGRATION=1 as CI runs.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CORRAL_INTEGRATION") == "1" {
			t.Fatal("mounting a small tmpfs needs root, as CI runs the tests")
		}
		t.Skip("needs root to mount a small tmpfs (run as root, as CI does)")
	}
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// On a 16 MiB state directory, one tenant's flood of output stops at
// the per-task cap with a marker, another tenant's job succeeds beside
// it, and once the disk is below the headroom a submission is refused
// with 507 and the reason, until space is freed.
func TestSmallDiskFloodLeavesOthersSucceeded(t *testing.T) {
	disk := smallDisk(t, "16m")
	st, err := store.Open(filepath.Join(disk, "corral.db"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Store: st, GPUs: fakeGPUs(2), StateDir: filepath.Join(disk, "tasks"), Interval: 50 * time.Millisecond,
		MaxOutputBytes: 1 << 20, MinFreeBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, srv, st)
	ctx := context.Background()
	flooder, other := h.tenant("flooder", 0), h.tenant("other", 0)
	flood := h.submit(flooder, api.JobRequest{GPUs: 1, Command: sh(`yes flooding the disk`)})
	h.wait(flooder, flood.ID, 20*time.Second, "flooding", func(j api.Job) bool {
		return j.State == "running" && strings.Contains(h.logs(flooder, j.ID, 0), "truncated")
	})
	done := h.submit(other, api.JobRequest{GPUs: 1, Command: sh(`sleep 1; echo done`)})
	end := h.wait(other, done.ID, 20*time.Second, "ended", func(j api.Job) bool { return store.State(j.State).Final() })
	if end.State != string(store.Succeeded) || h.logs(other, done.ID, 0) != "done\n" {
		t.Errorf("the other tenant's job beside the flood: %s (%s), log %q", end.State, end.Reason, h.logs(other, done.ID, 0))
	}
	job := h.job(flood.ID)
	log := filepath.Join(srv.taskDir(&job), flood.ID+"-0.out")
	if fi, err := os.Stat(log); err != nil || fi.Size() > 1<<20+200 {
		t.Errorf("the flood's log: %v, %d bytes; want at most the 1 MiB cap and the marker", err, fi.Size())
	}
	if out := readFile(t, log); !strings.HasSuffix(out, "\n[corral: output truncated: the task wrote more than the server's cap of 1048576 bytes; the rest was dropped]\n") {
		t.Errorf("the flood's log ends %q", out[max(len(out)-120, 0):])
	}
	if _, err := flooder.Cancel(ctx, flood.ID); err != nil {
		t.Fatal(err)
	}

	free, err := freeBytes(disk)
	if err != nil {
		t.Fatal(err)
	}
	fill := filepath.Join(disk, "fill")
	if err := os.WriteFile(fill, make([]byte, free-2<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = other.Submit(ctx, api.JobRequest{Command: []string{"true"}})
	if !isStatus(err, http.StatusInsufficientStorage) || !strings.Contains(err.Error(), "nearly full") {
		t.Errorf("a submission with 2 MiB free and 4 MiB kept: %v, want 507 saying the disk is nearly full", err)
	}
	os.Remove(fill)
	j := h.submit(other, api.JobRequest{Command: []string{"true"}})
	h.waitState(other, j.ID, store.Succeeded, 20*time.Second)
}

// A task's exit record is written even when the disk is full by the
// time it ends: the room for it is reserved at its start.
func TestExitRecordOnAFullDisk(t *testing.T) {
	disk := smallDisk(t, "4m")
	spec := executor.Spec{ID: "full-0", Dir: filepath.Join(disk, "tasks"), Command: []string{"sleep", "0.5"}}
	task, err := executor.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	free, err := freeBytes(disk)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(disk, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, free+1<<20)) // as much as it takes: ENOSPC
	f.Close()
	<-task.Done()
	if res := task.Result(); res.ExitCode != 0 || res.Lost {
		t.Errorf("a task that ended on a full disk: %+v, want exit 0, not lost", res)
	}
}

package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
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
	if out := readFile(t, log); !strings.HasSuffix(out, "\n[corral: output truncated: the task wrote more than its output cap (--max-output, or its tenant's --disk) of 1048576 bytes; the rest was dropped]\n") {
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

// A tenant's disk cap (1 MiB here) bounds what its jobs keep: a job that
// writes 3 MiB has its log cut at the cap; as more of its jobs end, the
// oldest ended jobs' files are removed, oldest first, until the rest fit,
// the newest always kept; the removed job's logs answer 410 saying why;
// another tenant without a cap keeps everything. Lowering the cap with
// tenant set applies it at once.
func TestTenantDiskCapRemovesItsOldestJobsFiles(t *testing.T) {
	h := newHarness(t, 2)
	ctx := context.Background()
	capped, free := h.tenant("capped", 0), h.tenant("free", 0)
	oneMiB := int64(1)
	if _, err := h.admin.UpdateTenant(ctx, "capped", api.TenantUpdate{DiskMiB: &oneMiB}); err != nil {
		t.Fatal(err)
	}
	write := func(c *client.Client, kib int) string {
		t.Helper()
		j := h.submit(c, api.JobRequest{GPUs: 1, Command: sh(fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", kib<<10))})
		h.waitState(c, j.ID, store.Succeeded, 20*time.Second)
		return j.ID
	}
	big := write(capped, 3<<10)
	if n := len(h.logs(capped, big, 0)); n > 1<<20+200 {
		t.Errorf("a 3 MiB log under a 1 MiB disk cap kept %d bytes", n)
	}
	var ids []string
	for range 3 {
		ids = append(ids, write(capped, 400))
	}
	// 1 MiB of the big job and 3 x 400 KiB: the big job and the first
	// 400 KiB one go, the last two (800 KiB) fit.
	removed := func(id string) bool { j := h.job(id); return h.srv.removedNote(&j) != "" }
	for deadline := time.Now().Add(20 * time.Second); !removed(big) || !removed(ids[0]); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the oldest jobs' files not removed: %s %v, %s %v", big, removed(big), ids[0], removed(ids[0]))
		}
	}
	for _, id := range ids[1:] {
		if n := len(h.logs(capped, id, 0)); n != 400<<10 {
			t.Errorf("job %s kept %d bytes of its log, want all 400 KiB", id, n)
		}
	}
	err := capped.Logs(ctx, big, 0, "", false, io.Discard)
	if !isStatus(err, http.StatusGone) || !strings.Contains(err.Error(), "disk cap of 1.0 MiB") {
		t.Errorf("logs of a job whose files were removed: %v, want 410 naming the cap", err)
	}
	other := write(free, 1200)
	if n := len(h.logs(free, other, 0)); n != 1200<<10 {
		t.Errorf("a tenant without a cap kept %d bytes, want 1200 KiB", n)
	}
	// Without a cap a 600 KiB job is kept beside the 800; the cap set
	// again removes the oldest of them at once.
	zero := int64(0)
	if _, err := h.admin.UpdateTenant(ctx, "capped", api.TenantUpdate{DiskMiB: &zero}); err != nil {
		t.Fatal(err)
	}
	last := write(capped, 600)
	if removed(ids[1]) {
		t.Fatalf("job %s's files removed while the tenant had no cap", ids[1])
	}
	if _, err := h.admin.UpdateTenant(ctx, "capped", api.TenantUpdate{DiskMiB: &oneMiB}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); !removed(ids[1]); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the cap set again did not remove the oldest job's files")
		}
	}
	if removed(ids[2]) || removed(last) {
		t.Errorf("files removed beyond what the cap needs: %s %v, %s %v", ids[2], removed(ids[2]), last, removed(last))
	}
	neg := int64(-1)
	if _, err := h.admin.UpdateTenant(ctx, "capped", api.TenantUpdate{DiskMiB: &neg}); !isStatus(err, http.StatusBadRequest) {
		t.Errorf("a negative disk cap: %v, want 400", err)
	}
	// The tenant itself cannot lift its cap.
	if _, err := capped.UpdateTenant(ctx, "capped", api.TenantUpdate{DiskMiB: &zero}); !isStatus(err, http.StatusForbidden) {
		t.Errorf("the tenant lifting its own disk cap: %v, want 403", err)
	}
	if got, err := h.st.Tenant("capped"); err != nil || got.DiskMiB != 1 {
		t.Errorf("disk cap after the attempt: %d MiB (%v), want 1", got.DiskMiB, err)
	}
}

// A run that ends while the store cannot write (its disk is full, its
// device failing: store.FailWrites, since bbolt on a full disk may still
// reuse the pages its last write freed) is not turned into a failure,
// nor left shown running: the server shows it ended as it did, frees its
// GPU, keeps its end in memory and records it, with exactly one
// accounting record, once the store writes again. Before, the end was
// logged ("persist end") and lost: the store showed the job running on a
// GPU the server had freed.
func TestJobEndKeptWhileTheStoreCannotWrite(t *testing.T) {
	h := newHarness(t, 1)
	id := endWhileTheStoreFails(t, h)
	time.Sleep(5 * h.srv.cfg.Interval) // cycles retry, and fail
	h.st.FailWrites(nil)
	endRecordedOnce(t, h, id)
}

// A server restarted before its store could record a run's end reads
// the end again from the tasks' exit records.
func TestJobEndKeptAcrossARestartWhileTheStoreCannotWrite(t *testing.T) {
	dir, st := tempStore(t)
	open := func() *harness {
		srv, err := New(Config{Store: st, GPUs: fakeGPUs(1), StateDir: filepath.Join(dir, "tasks"), Interval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return startHarness(t, srv, st)
	}
	h := open()
	id := endWhileTheStoreFails(t, h)
	h.crash() // the server goes away, its tasks' files stay
	st.FailWrites(nil)
	endRecordedOnce(t, open(), id)
}

// endWhileTheStoreFails runs a job on h and makes the store fail its
// writes before the job ends; it checks what the server shows then and
// returns the job's ID.
func endWhileTheStoreFails(t *testing.T, h *harness) string {
	t.Helper()
	c := h.tenant("a", 0)
	trigger := filepath.Join(t.TempDir(), "end")
	j := h.submit(c, api.JobRequest{GPUs: 1, Command: sh(fmt.Sprintf(`while [ ! -e %s ]; do sleep 0.05; done; echo done`, trigger))})
	h.waitState(c, j.ID, store.Running, 20*time.Second)

	h.st.FailWrites(fmt.Errorf("write %s: %w", h.st.Path(), syscall.ENOSPC))
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	end := h.wait(c, j.ID, 20*time.Second, "ended", func(j api.Job) bool { return store.State(j.State).Final() })
	if end.State != string(store.Succeeded) || end.ExitCode == nil || *end.ExitCode != 0 {
		t.Errorf("the job's end while the store cannot write: %s exit %v (%s), want succeeded, exit 0", end.State, end.ExitCode, end.Reason)
	}
	if got := h.job(j.ID).State; got != store.Running {
		t.Fatalf("the store recorded the end while it could not write (%s)", got)
	}
	if gpus := h.srv.GPUs(); len(gpus.GPUs[0].Jobs) != 0 {
		t.Errorf("the ended job still holds its GPU: %+v", gpus.GPUs[0])
	}
	if _, err := c.Cancel(context.Background(), j.ID); !isStatus(err, http.StatusConflict) {
		t.Errorf("cancel of the ended job: %v, want 409", err)
	}
	return j.ID
}

// endRecordedOnce waits until the store records job id succeeded, with
// exit code 0 and one accounting record.
func endRecordedOnce(t *testing.T, h *harness, id string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); h.job(id).State != store.Succeeded; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the end not recorded once the store wrote again: it says %s (%s)", h.job(id).State, h.job(id).Reason)
		}
	}
	if got := h.job(id); got.ExitCode == nil || *got.ExitCode != 0 || got.Ended.IsZero() {
		t.Errorf("the recorded end: exit %v, ended %v", got.ExitCode, got.Ended)
	}
	recs, err := h.st.Records(store.Window{})
	if err != nil {
		t.Fatal(err)
	}
	if n := countRecords(recs, mustID(t, id)); n != 1 {
		t.Errorf("%d accounting records of the job, want 1", n)
	}
}

// countRecords counts the accounting records of job id.
func countRecords(recs []store.Record, id uint64) int {
	n := 0
	for _, r := range recs {
		if r.JobID == id {
			n++
		}
	}
	return n
}

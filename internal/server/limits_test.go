package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

// limitsHarness is a root server that runs jobs as their tenants' Unix
// users in cgroups, as a shared box does, with edit's limits.
func limitsHarness(t *testing.T, gpus int, edit func(*Config)) *harness {
	t.Helper()
	requireRoot(t)
	h := isoHarness(t, gpus, func(c *Config) {
		c.RunAs, c.Cgroups = RunAsTenant, true
		os.Chmod(filepath.Dir(c.StateDir), 0o711) // the test's temp dir: users pass through it
		os.Chmod(filepath.Dir(filepath.Dir(c.StateDir)), 0o711)
		edit(c)
	})
	if h.srv.iso.cgroups == nil {
		t.Skipf("no cgroups here: %v", h.srv.iso.problems)
	}
	return h
}

// ignoresTERM is a job that SIGTERM cannot end: only a SIGKILL does.
var ignoresTERM = sh(`trap '' TERM; sleep 600`)

// A grace period asked above the admin's cap is lowered to it, and the
// view says so; a job that ignores SIGTERM then ends within the cap
// after its time limit, after a cancel and after a preemption.
func TestGraceIsCappedByTheAdmin(t *testing.T) {
	const capped = 2 * time.Second
	const slack = 4 * time.Second
	u := unixUser(t) // before the harness: its cleanup, which kills the tasks, runs before userdel's
	h := limitsHarness(t, 1, func(c *Config) { c.MaxGrace = capped })
	c := h.userTenant("mallory", u)
	ctx := context.Background()

	timed := h.submit(c, api.JobRequest{Time: "0:00:05", Grace: "1000000h", Command: ignoresTERM})
	if timed.Request.Grace != capped.String() || len(timed.Adjusted) == 0 || !strings.Contains(timed.Adjusted[0], "1000000h") {
		t.Errorf("grace 1000000h under a cap of %v: the job shows grace %q, adjusted %q", capped, timed.Request.Grace, timed.Adjusted)
	}
	run := h.waitState(c, timed.ID, store.Running, 20*time.Second)
	end := h.wait(c, timed.ID, 5*time.Second+capped+slack, "ended", func(j api.Job) bool { return j.State != "running" })
	if end.SlurmState != store.OutcomeTimeout {
		t.Errorf("job at its time limit ended %s (%s), want TIMEOUT", end.SlurmState, end.Reason)
	}
	if took := end.Ended.Sub(*run.Started); took > 5*time.Second+capped+slack {
		t.Errorf("the job ran %v with a time limit of 5s and a grace cap of %v", took, capped)
	}

	cancelled := h.submit(c, api.JobRequest{Grace: "1000000h", Command: ignoresTERM})
	h.waitState(c, cancelled.ID, store.Running, 20*time.Second)
	if _, err := c.Cancel(ctx, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	h.wait(c, cancelled.ID, capped+slack, "cancelled", func(j api.Job) bool { return j.State == string(store.Cancelled) })

	h.allowPriority("mallory", 5)
	low := h.submit(c, api.JobRequest{GPUs: 1, Grace: "1000000h", Command: ignoresTERM})
	h.waitState(c, low.ID, store.Running, 20*time.Second)
	high := h.submit(c, api.JobRequest{GPUs: 1, Priority: 5, Command: []string{"true"}})
	h.waitState(c, high.ID, store.Succeeded, capped+slack)
}

// A tenant's priority is bounded by the admin, and decides preemption
// among its own jobs only: a tenant without a quota, allowed priority
// 1000, does not preempt another tenant's work inside that tenant's
// quota; a priority above the bound is refused, saying why.
func TestSelfSetPriorityNeverPreemptsAnotherTenantsQuota(t *testing.T) {
	h := newHarness(t, 2)
	ctx := context.Background()
	alice, bob := h.tenant("alice", 2), h.tenant("bob", 0)
	var held []api.Job
	for range 2 {
		held = append(held, h.submit(alice, api.JobRequest{GPUs: 1, Command: []string{"sleep", "60"}}))
	}
	for _, j := range held {
		h.waitState(alice, j.ID, store.Running, 20*time.Second)
	}
	if _, err := bob.Submit(ctx, api.JobRequest{GPUs: 1, Priority: 1000, Command: []string{"true"}}); !isStatus(err, http.StatusForbidden) || !strings.Contains(err.Error(), "at most 0") {
		t.Errorf("priority 1000 from a tenant bounded at 0: %v, want 403 saying the bound", err)
	}
	h.allowPriority("bob", 1000)
	urgent := h.submit(bob, api.JobRequest{GPUs: 1, Priority: 1000, Command: []string{"true"}})
	for range 10 {
		h.waitCycle()
	}
	for _, j := range held {
		if got := h.job(j.ID); got.State != store.Running || got.Stopping != "" || got.Attempts != 1 {
			t.Errorf("alice's job %s inside her quota is %s (stopping %q, attempt %d) after bob's priority-1000 job", j.ID, got.State, got.Stopping, got.Attempts)
		}
	}
	if got := h.job(urgent.ID); got.State != store.Pending {
		t.Errorf("bob's job is %s, want pending", got.State)
	}
}

// A cap lowered while a job runs holds for the job's cancel.
func TestLoweredGraceCapHoldsForARunningJob(t *testing.T) {
	h := newHarness(t, 1)
	ctx := context.Background()
	c := h.tenant("team", 0)
	j := h.submit(c, api.JobRequest{Grace: "20s", Command: ignoresTERM})
	h.waitState(c, j.ID, store.Running, 20*time.Second)
	one := "1s"
	if _, err := h.admin.UpdateTenant(ctx, "team", api.TenantUpdate{MaxGrace: &one}); err != nil {
		t.Fatal(err)
	}
	h.waitCycle()
	if _, err := c.Cancel(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	h.wait(c, j.ID, 5*time.Second, "cancelled", func(j api.Job) bool { return j.State == string(store.Cancelled) })
}

// A tenant's own cap, set by the admin, overrides the server's.
func TestTenantGraceCap(t *testing.T) {
	h := newHarness(t, 1)
	ctx := context.Background()
	c := h.tenant("team", 0)
	one := "1s"
	if _, err := h.admin.UpdateTenant(ctx, "team", api.TenantUpdate{MaxGrace: &one}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ asked, want string }{{"500ms", "500ms"}, {"1m", "1s"}, {"", "1s"}} {
		j := h.submit(c, api.JobRequest{Grace: tc.asked, Command: []string{"true"}})
		if j.Request.Grace != tc.want {
			t.Errorf("grace %q under the tenant's cap of 1s: got %q, want %q", tc.asked, j.Request.Grace, tc.want)
		}
	}
	bad := "-1s"
	if _, err := h.admin.UpdateTenant(ctx, "team", api.TenantUpdate{MaxGrace: &bad}); err == nil {
		t.Error("a negative grace cap was accepted")
	}
}

// memTenant creates a tenant run as a new Unix user with the given
// memory (MiB) and CPU quotas, and returns its client.
func (h *harness) memTenant(name string, memMiB int64, cpus float64) *client.Client {
	h.t.Helper()
	ctx := context.Background()
	u := unixUser(h.t)
	if _, err := h.admin.CreateTenant(ctx, api.TenantRequest{Name: name, UnixUser: u.Name, QuotaMemoryMiB: memMiB, QuotaCPUs: cpus}); err != nil {
		h.t.Fatal(err)
	}
	tok, err := h.admin.IssueToken(ctx, name)
	if err != nil {
		h.t.Fatal(err)
	}
	return &client.Client{Server: h.url, Token: tok.Token}
}

// A job that declares no memory is charged the default within its
// tenant's memory quota and cannot touch more: the kernel's OOM killer
// ends it at its cgroup's limit, and it ends OUT_OF_MEMORY. Its CPU is
// capped the same way by the tenant's CPU quota.
func TestJobWithoutMemCannotExceedTheTenantsMemory(t *testing.T) {
	h := limitsHarness(t, 1, func(*Config) {})
	if !h.srv.iso.cgroups.Has("memory") || !h.srv.iso.cgroups.Has("cpu") {
		t.Skipf("no memory or cpu controller here: %v", h.srv.iso.problems)
	}
	c := h.memTenant("greedy", 64, 0.5)
	// dd fills a 256 MiB buffer from /dev/zero: 256 MiB resident.
	j := h.submit(c, api.JobRequest{Command: sh(`q=$(grep ':cpu[,:]' /proc/self/cgroup | cut -d: -f3); cat /sys/fs/cgroup/cpu$q/cpu.cfs_quota_us
dd if=/dev/zero of=/dev/null bs=256M count=1 && echo survived`)})
	if j.Request.MemoryMiB != 64 || j.Request.CPU != 0.5 {
		t.Errorf("a job without --mem or -c of a tenant with 64 MiB and 0.5 CPUs: charged %d MiB, %v CPUs", j.Request.MemoryMiB, j.Request.CPU)
	}
	end := h.wait(c, j.ID, 30*time.Second, "ended", func(j api.Job) bool { return store.State(j.State).Final() })
	out := h.logs(c, j.ID, 0)
	if end.SlurmState != store.OutcomeOutOfMemory || end.State != string(store.Failed) || strings.Contains(out, "survived") {
		t.Errorf("the job touched 256 MiB with a quota of 64 MiB: %s (%s), output %q", end.SlurmState, end.Reason, out)
	}
	if !strings.HasPrefix(out, "50000\n") {
		t.Errorf("the job's CFS quota is %q, want 50000 (0.5 CPUs of a 100000us period)", out)
	}
}

// A task cannot have more processes than the server's pids limit.
func TestTaskProcessesAreCapped(t *testing.T) {
	h := limitsHarness(t, 1, func(c *Config) { c.PidsMax = 16 })
	if !h.srv.iso.cgroups.Has("pids") {
		t.Skipf("no pids controller here: %v", h.srv.iso.problems)
	}
	c := h.userTenant("forker", unixUser(t))
	j := h.submit(c, api.JobRequest{Command: sh(`i=0; while [ $i -lt 40 ]; do sleep 2 & i=$((i+1)); done; wait; echo all-forked`)})
	end := h.wait(c, j.ID, 30*time.Second, "ended", func(j api.Job) bool { return store.State(j.State).Final() })
	if out := h.logs(c, j.ID, 0); end.State == string(store.Succeeded) || strings.Contains(out, "all-forked") {
		t.Errorf("a task of a server with a pids limit of 16 forked 40 processes: %s, %q", end.State, out)
	}
}

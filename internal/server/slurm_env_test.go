package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// envOf reads the KEY=VALUE lines of a task's log.
func envOf(log string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(log, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}

// TestBatchScriptRunsTheCopyTakenAtSubmit: the job runs the script as
// it was when submitted, with its arguments, named after it.
func TestBatchScriptRunsTheCopyTakenAtSubmit(t *testing.T) {
	h := newHarness(t, 1)
	c := h.tenant("alice", 0)
	j := h.submit(c, api.JobRequest{Script: "#!/bin/sh\necho \"script $1 $SLURM_JOB_NAME\"\n", Command: []string{"train.sh", "arg1"}})
	h.waitState(c, j.ID, store.Succeeded, 20*time.Second)
	if out := h.logs(c, j.ID, 0); out != "script arg1 train.sh\n" {
		t.Errorf("the script wrote %q; want its argument and its name as the job's", out)
	}
	if _, err := c.Submit(context.Background(), api.JobRequest{Script: "echo no interpreter\n", Command: []string{"x.sh"}}); err == nil || !strings.Contains(err.Error(), "#!") {
		t.Errorf("a script without #!: %v; want it refused", err)
	}
}

// TestSlurmVariablesAsLightningAndSubmititReadThem: a 2-task gang gets
// what Lightning's SLURMEnvironment and submitit's SlurmJobEnvironment
// read, per rank; a one-task job that did not name its tasks gets no
// SLURM_NTASKS (Lightning would take it for a Slurm task); the
// submitter's umask and submit directory reach the job.
func TestSlurmVariablesAsLightningAndSubmititReadThem(t *testing.T) {
	h := newHarness(t, 2)
	c := h.tenant("alice", 0)
	submitDir := t.TempDir()
	gang := h.submit(c, api.JobRequest{Name: "train", Tasks: 2, GPUs: 1, SubmitDir: submitDir, Umask: "0027", Command: sh("env; echo UMASK=$(umask)")})
	h.waitState(c, gang.ID, store.Succeeded, 20*time.Second)
	id := strings.TrimLeft(strings.TrimPrefix(gang.ID, "j"), "0")
	for rank, want := range []string{"0", "1"} {
		env := envOf(h.logs(c, gang.ID, rank))
		for k, v := range map[string]string{"SLURM_JOB_ID": id, "SLURM_NTASKS": "2", "SLURM_NTASKS_PER_NODE": "2", "SLURM_PROCID": want,
			"SLURM_LOCALID": want, "SLURM_NODEID": "0", "SLURM_JOB_NUM_NODES": "1", "SLURM_JOB_NAME": "train",
			"SLURM_SUBMIT_DIR": submitDir, "SLURM_UMASK": "0027", "UMASK": "0027", "RANK": want, "WORLD_SIZE": "2"} {
			if env[k] != v {
				t.Errorf("rank %d: %s=%q; want %q", rank, k, env[k], v)
			}
		}
		if env["SLURM_JOB_NODELIST"] == "" || env["SLURM_NODELIST"] != env["SLURM_JOB_NODELIST"] {
			t.Errorf("rank %d: node lists %q and %q; want the machine's name in both", rank, env["SLURM_JOB_NODELIST"], env["SLURM_NODELIST"])
		}
	}
	one := h.submit(c, api.JobRequest{Command: []string{"env"}})
	h.waitState(c, one.ID, store.Succeeded, 20*time.Second)
	if env := envOf(h.logs(c, one.ID, 0)); env["SLURM_NTASKS"] != "" || env["SLURM_PROCID"] != "0" {
		t.Errorf("a one-task job without -n: SLURM_NTASKS=%q SLURM_PROCID=%q; want none and 0", env["SLURM_NTASKS"], env["SLURM_PROCID"])
	}
}

// TestSignalBeforeTheTimeLimit: --signal USR1@2 reaches a job with a 4 s
// limit about 2 s before it is stopped.
func TestSignalBeforeTheTimeLimit(t *testing.T) {
	h := newHarness(t, 1)
	c := h.tenant("alice", 0)
	j := h.submit(c, api.JobRequest{Time: "4s", Signal: "USR1@2",
		Command: sh(`s=$(date +%s%N); trap 'echo got USR1 after $(( ($(date +%s%N) - s) / 1000000 )) ms' USR1; while :; do sleep 0.1; done`)})
	end := h.wait(c, j.ID, 20*time.Second, "ended", func(j api.Job) bool { return j.State == "failed" })
	out := h.logs(c, j.ID, 0)
	if end.SlurmState != store.OutcomeTimeout || !strings.Contains(out, "got USR1 after") {
		t.Errorf("ended %s with %q; want TIMEOUT after the job said it got USR1", end.SlurmState, out)
	}
	var ms int
	if _, err := fmt.Sscanf(strings.TrimSpace(out), "got USR1 after %d ms", &ms); err != nil || ms < 1500 || ms > 3000 {
		t.Errorf("USR1 came at the wrong time: %q; want about 2000 ms into a 4 s limit", out)
	}
}

// TestAcctRecordsMaxRSSAndCPUTime: the attempt's record holds the peak
// memory of its processes and the CPU they used.
func TestAcctRecordsMaxRSSAndCPUTime(t *testing.T) {
	h := newHarness(t, 1)
	c := h.tenant("alice", 0)
	j := h.submit(c, api.JobRequest{Command: sh(`dd if=/dev/zero of=/dev/null bs=64M count=2 2>/dev/null; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done`)})
	h.waitState(c, j.ID, store.Succeeded, 60*time.Second)
	a, err := c.Acct(context.Background(), nil)
	if err != nil || len(a.Records) != 1 {
		t.Fatalf("acct: %+v, %v", a, err)
	}
	if r := a.Records[0]; r.MaxRSSKiB < 60<<10 || r.CPUSeconds <= 0.05 {
		t.Errorf("record: MaxRSS %d KiB, CPU %.3f s; want over 60 MiB (dd's 64 MiB buffer) and the loop's CPU time", r.MaxRSSKiB, r.CPUSeconds)
	}
}

// TestOutputFilesAreTheJobUsersOwn: -o and -e files (patterns expanded)
// are written in the job's directory by its tenant's Unix user, under
// its umask, with the output copied to corral's log as well; a file
// where that user may not write fails the job without creating it.
func TestOutputFilesAreTheJobUsersOwn(t *testing.T) {
	u := unixUser(t)
	h := limitsHarness(t, 1, func(*Config) {})
	c := h.userTenant("alice", u)
	work := t.TempDir()
	os.Chmod(filepath.Dir(work), 0o711)
	if err := os.Chown(work, int(u.UID), int(u.GID)); err != nil {
		t.Fatal(err)
	}
	j := h.submit(c, api.JobRequest{Name: "train", WorkDir: work, Output: "%x-%j.out", Error: "err/%j.err", Umask: "0077",
		Command: sh(`mkdir -p err; echo to-out; echo to-err >&2`)})
	// err/ does not exist when the files are opened: the job fails
	h.wait(c, j.ID, 20*time.Second, "ended", func(j api.Job) bool { return j.State == "failed" })
	if err := os.Mkdir(filepath.Join(work, "err"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chown(filepath.Join(work, "err"), int(u.UID), int(u.GID))
	j = h.submit(c, api.JobRequest{Name: "train", WorkDir: work, Output: "%x-%j.out", Error: "err/%j.err", Umask: "0077",
		Command: sh(`echo to-out; echo to-err >&2`)})
	h.waitState(c, j.ID, store.Succeeded, 20*time.Second)
	num := strings.TrimLeft(strings.TrimPrefix(j.ID, "j"), "0")
	for path, want := range map[string]string{filepath.Join(work, "train-"+num+".out"): "to-out\n", filepath.Join(work, "err", num+".err"): "to-err\n"} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		st := fi.Sys().(*syscall.Stat_t)
		if got := readFile(t, path); got != want || st.Uid != u.UID || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %q, uid %d, mode %v; want %q, uid %d (the tenant's user), 0600 (umask 0077)", path, got, st.Uid, fi.Mode().Perm(), want, u.UID)
		}
	}
	if out := h.logs(c, j.ID, 0); out != "to-out\n" {
		t.Errorf("corral's log: %q; want the output there too", out)
	}
	forbidden := t.TempDir() // root's, 0700
	bad := h.submit(c, api.JobRequest{WorkDir: work, Output: filepath.Join(forbidden, "x.out"), Command: []string{"true"}})
	if end := h.wait(c, bad.ID, 20*time.Second, "ended", func(j api.Job) bool { return j.State == "failed" }); !strings.Contains(end.Reason, "permission denied") {
		t.Errorf("an output file where the user may not write: %s; want it refused for permission", end.Reason)
	}
	if _, err := os.Stat(filepath.Join(forbidden, "x.out")); err == nil {
		t.Errorf("the server created a file the job's user could not have")
	}
}

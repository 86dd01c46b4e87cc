package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
)

// slurmServer starts a real corral server with n A100s and points the
// CLI at it; jobs run as nobody when the tests run as root.
func slurmServer(t *testing.T, n int) *client.Client {
	t.Helper()
	return cliServer(t, filepath.Join(t.TempDir(), "corral.db"), strconv.Itoa(n)+"xA100-80GB")
}

// cliServer starts a real corral server on the store db with the GPUs
// gpus ("8xH100-80GB"), points the CLI at it ($CORRAL_SERVER,
// $CORRAL_TOKEN) and returns its admin client; jobs run as nobody when
// the tests run as root.
func cliServer(t *testing.T, db, gpus string) *client.Client {
	t.Helper()
	srv := startServerChild(t, "--db", db, "--gpus", gpus, "--listen", anyLoopbackPort, "--new-admin-token")
	t.Setenv("CORRAL_SERVER", srv.url)
	t.Setenv("CORRAL_TOKEN", srv.token)
	c := &client.Client{Server: srv.url, Token: srv.token}
	jobsAsNobody(t, c, filepath.Dir(db))
	return c
}

// jobDir is a directory the jobs' user may write in.
func jobDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o711)
	if os.Geteuid() == 0 {
		if u, err := user.Lookup("nobody"); err == nil {
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			os.Chown(dir, uid, gid)
		}
	}
	return dir
}

func cliRun(args ...string) (string, string, int) {
	var out, errOut strings.Builder
	code := run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestSbatchScriptsAgainstServer: a published script's #SBATCH lines
// become the job's shape (what is ignored said with its line); a script
// of our own runs its copy with its argument, the command line's -J
// overriding its directive, and writes its -o file; a two-node script is
// refused naming its line.
func TestSbatchScriptsAgainstServer(t *testing.T) {
	c := slurmServer(t, 2)
	dir := jobDir(t)
	out, errOut, code := cliRun("sbatch", "--hold", "-D", dir, filepath.Join("..", "..", "internal", "sbatch", "testdata", "princeton-single-gpu.slurm"))
	if code != 0 || !strings.HasPrefix(out, "Submitted batch job j") || !strings.Contains(errOut, "princeton-single-gpu.slurm:9: #SBATCH --reservation ignored") {
		t.Fatalf("sbatch the Princeton script: exit %d, %q, %q", code, out, errOut)
	}
	id := strings.TrimSpace(strings.TrimPrefix(out, "Submitted batch job "))
	j, err := c.Job(context.Background(), id)
	if r := j.Request; err != nil || r.Name != "mnist" || r.GPUs != 1 || r.CPU != 1 || r.MemoryMiB != 8<<10 || r.Time != "5m0s" || r.Command[0] != "princeton-single-gpu.slurm" || !strings.HasPrefix(r.Script, "#!/bin/bash") {
		t.Errorf("the Princeton script's job: %+v, %v", j.Request, err)
	}
	script := filepath.Join(dir, "hello.sbatch")
	os.WriteFile(script, []byte("#!/bin/sh\n#SBATCH -J fromscript\n#SBATCH --gpus=1 --time=5\n#SBATCH -o out-%x-%j.txt\necho hello $1 $SLURM_JOB_NAME\n"), 0o644)
	out, errOut, code = cliRun("sbatch", "--parsable", "-J", "fromflag", "-D", dir, script, "world")
	if code != 0 {
		t.Fatalf("sbatch hello: exit %d, %q", code, errOut)
	}
	id = strings.TrimSpace(out)
	os.WriteFile(script, []byte("#!/bin/sh\necho edited after submit\n"), 0o644) // sbatch ran the copy it took
	waitJob(t, c, id, func(j api.Job) bool { return j.State == "succeeded" })
	num := strings.TrimLeft(strings.TrimPrefix(id, "j"), "0")
	if got := readOr(filepath.Join(dir, "out-fromflag-"+num+".txt")); got != "hello world fromflag\n" {
		t.Errorf("the -o file holds %q; want the copy's output with the command line's name", got)
	}
	out, errOut, code = cliRun("sbatch", "--parsable", "-G", "0", "-D", dir, "--wrap", "echo wrapped")
	if code != 0 {
		t.Fatalf("sbatch --wrap: exit %d, %q", code, errOut)
	}
	id = strings.TrimSpace(out)
	waitJob(t, c, id, func(j api.Job) bool { return j.State == "succeeded" })
	if got := readOr(filepath.Join(dir, "slurm-"+strings.TrimLeft(strings.TrimPrefix(id, "j"), "0")+".out")); got != "wrapped\n" {
		t.Errorf("sbatch's default output file holds %q; want the job's output in slurm-%%j.out", got)
	}
	two := filepath.Join(dir, "two.sbatch")
	os.WriteFile(two, []byte("#!/bin/bash\n#SBATCH --gres=gpu:2\n#SBATCH --nodes=2\nsrun true\n"), 0o644)
	if _, errOut, code := cliRun("submit", two); code == 0 || !strings.Contains(errOut, "two.sbatch:3: #SBATCH --nodes=2") {
		t.Errorf("a two-node script: exit %d, %q; want it refused naming line 3", code, errOut)
	}
}

func readOr(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

// TestRunExitsWithTheJobsCode: corral run prints every rank's output
// and exits with the job's exit code.
func TestRunExitsWithTheJobsCode(t *testing.T) {
	slurmServer(t, 2)
	out, errOut, code := cliRun("run", "--gpus", "0", "--", "sh", "-c", "echo out; echo err >&2; exit 7")
	if code != 7 || out != "out\n" || !strings.Contains(errOut, "err\n") {
		t.Errorf("corral run exiting 7: exit %d, stdout %q, stderr %q; want 7, out, err", code, out, errOut)
	}
	out, _, code = cliRun("run", "-G", "2", "-n", "2", "-l", "--", "sh", "-c", "echo rank $SLURM_PROCID of $SLURM_NTASKS")
	if code != 0 || !strings.Contains(out, "0: rank 0 of 2\n") || !strings.Contains(out, "1: rank 1 of 2\n") {
		t.Errorf("corral run -n 2 -l: exit %d, %q", code, out)
	}
}

// TestRunCancelsTheJobOnSIGINT: Ctrl-C on corral run cancels the job,
// and corral run exits 130, as a shell would.
func TestRunCancelsTheJobOnSIGINT(t *testing.T) {
	c := slurmServer(t, 1)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverChildEnv+"="+strings.Join([]string{"run", "-J", "interrupted", "--gpus", "0", "--", "sleep", "60"}, "\n"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	var id string
	for deadline := time.Now().Add(30 * time.Second); id == ""; {
		jobs, _ := c.Jobs(context.Background(), nil)
		for _, j := range jobs {
			if j.Request.Name == "interrupted" && j.State == "running" {
				id = j.ID
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the job did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("corral run after SIGINT: %v; want exit status 130", err)
	}
	if j, _ := c.Job(context.Background(), id); j.State != "cancelled" {
		t.Errorf("the job is %s after corral run's SIGINT; want cancelled", j.State)
	}
}

// TestQueueShowsArraysAndFilters: an array's tasks show as ID_IDX with
// squeue's reasons, -t/-j/-o filter and format them, a task is held and
// released by its ID_IDX, and cancelling the array's ID cancels them
// all.
func TestQueueShowsArraysAndFilters(t *testing.T) {
	c := slurmServer(t, 2)
	out, errOut, code := cliRun("submit", "--array", "0-3%2", "--gpus", "0", "-t", "10", "--json", "--", "sleep", "60")
	var first api.Job
	if code != 0 || json.Unmarshal([]byte(out), &first) != nil || first.ArrayTasks != 4 {
		t.Fatalf("submit --array: exit %d, %q, %q", code, out, errOut)
	}
	arr := first.ID
	waitJob(t, c, arr, func(j api.Job) bool { return j.State == "running" })
	if _, errOut, code := cliRun("hold", arr+"_3"); code != 0 {
		t.Fatalf("hold %s_3: %q", arr, errOut)
	}
	deadline := time.Now().Add(20 * time.Second)
	var table string
	for {
		table, _, _ = cliRun("queue", "-j", arr, "-o", "%i %t %r %l")
		if strings.Count(table, " R ") == 2 && strings.Contains(table, arr+"_3 PD JobHeldUser 10:00") && strings.Contains(table, "PD JobArrayTaskLimit") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue -o:\n%s\nwant two running, %s_3 held, one at the array's limit, limits of 10:00", table, arr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out, _, _ := cliRun("queue", "-t", "PD", "--noheader", "-o", "%i"); strings.Count(out, "\n") != 2 || strings.Contains(out, arr+"_0") {
		t.Errorf("queue -t PD: %q; want the two waiting tasks", out)
	}
	if out, _, _ := cliRun("queue", "--me"); !strings.Contains(out, "TIME_LIMIT") || !strings.Contains(out, arr+"_1") {
		t.Errorf("queue --me: %q; want the admin's own tasks and a TIME_LIMIT column", out)
	}
	if _, errOut, code := cliRun("release", arr+"_3"); code != 0 {
		t.Fatalf("release: %q", errOut)
	}
	if out, errOut, code := cliRun("update", arr, "--array-limit", "4"); code != 0 || strings.Count(out, "Updated job") != 2 {
		t.Fatalf("update %s --array-limit 4: exit %d, %q %q; want the two waiting tasks updated", arr, code, out, errOut)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		if out, _, _ := cliRun("queue", "-t", "R", "--noheader", "-o", "%i"); strings.Count(out, "\n") == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the array's four tasks do not all run after its limit was raised to 4")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out, errOut, code := cliRun("cancel", arr); code != 0 || strings.Count(out, "job") != 4 {
		t.Fatalf("cancel %s: exit %d, %q %q; want all four tasks", arr, code, out, errOut)
	}
	jobs, _ := c.Jobs(context.Background(), nil)
	for _, j := range jobs {
		if j.ArrayJob == arr {
			waitJob(t, c, j.ID, func(j api.Job) bool { return j.State == "cancelled" })
		}
	}
}

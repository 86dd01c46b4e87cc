package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
)

// serverChildEnv makes the test binary run `corral` with these
// arguments (separated by newlines) instead of the tests.
const serverChildEnv = "CORRAL_TEST_RUN_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(serverChildEnv); args != "" {
		os.Exit(run(strings.Split(args, "\n"), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// serverChild is `corral server` running as a real child process.
type serverChild struct {
	cmd   *exec.Cmd
	url   string
	token string // set when the server printed one
}

func startServerChild(t *testing.T, args ...string) *serverChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverChildEnv+"="+strings.Join(append([]string{"server"}, args...), "\n"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &serverChild{cmd: cmd}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the server exited before it listened")
			}
			if rest, ok := strings.CutPrefix(line, "corral server listening on "); ok {
				c.url = strings.Fields(rest)[0]
			}
			if rest, ok := strings.CutPrefix(line, "export CORRAL_TOKEN="); ok {
				c.token = strings.Fields(rest)[0]
			}
			if c.url != "" && (c.token != "" || !strings.Contains(strings.Join(args, " "), "--new-admin-token")) {
				go func() {
					for range lines {
					}
				}()
				return c
			}
		case <-deadline:
			t.Fatal("the server did not start in 30 s")
		}
	}
}

// anyLoopbackPort is a --listen address on which the server takes any
// free port and says which (startServerChild reads it), where a port
// picked free beforehand may be taken by a test running beside.
const anyLoopbackPort = "127.0.0.1:0"

// TestRestartAdoptsRunningJob kills the server with SIGKILL while a job
// runs, starts a new server on the same database, and checks that the job
// is re-adopted (same process), its exit code recorded, and nothing
// acknowledged lost.
func TestRestartAdoptsRunningJob(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--db", filepath.Join(dir, "corral.db"), "--gpus", "4xH100-80GB"}
	first := startServerChild(t, append(args, "--listen", anyLoopbackPort, "--new-admin-token")...)
	args = append(args, "--listen", strings.TrimPrefix(first.url, "http://")) // the restart takes the first's port
	c := &client.Client{Server: first.url, Token: first.token}
	jobsAsNobody(t, c, dir)
	ctx := context.Background()
	long, err := c.Submit(ctx, api.JobRequest{GPUs: 2, Command: []string{"sh", "-c", "echo started; sleep 4; echo finished; exit 7"}})
	if err != nil {
		t.Fatal(err)
	}
	var acked []string
	for range 5 { // waiting behind the long job
		j, err := c.Submit(ctx, api.JobRequest{GPUs: 4, Command: []string{"true"}})
		if err != nil {
			t.Fatal(err)
		}
		acked = append(acked, j.ID)
	}
	running := waitJob(t, c, long.ID, func(j api.Job) bool { return j.State == "running" && len(j.Tasks) == 1 && j.Tasks[0].PID > 0 })
	pid := running.Tasks[0].PID

	first.cmd.Process.Signal(syscall.SIGKILL)
	first.cmd.Wait()
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the task (pid %d) died with the server: %v", pid, err)
	}

	second := startServerChild(t, args...)
	c.Server = second.url
	adopted, err := c.Job(ctx, long.ID)
	if err != nil {
		t.Fatal(err)
	}
	if adopted.State != "running" || adopted.Tasks[0].PID != pid {
		t.Fatalf("after restart the job is %s with tasks %+v; want running with pid %d", adopted.State, adopted.Tasks, pid)
	}
	done := waitJob(t, c, long.ID, func(j api.Job) bool { return j.State == "failed" })
	if done.ExitCode == nil || *done.ExitCode != 7 || done.Tasks[0].PID != pid {
		t.Fatalf("re-adopted job ended %+v; want exit code 7 from pid %d", done, pid)
	}
	var out strings.Builder
	if err := c.Logs(ctx, long.ID, 0, "", false, &out); err != nil || !strings.Contains(out.String(), "finished") {
		t.Fatalf("log %q, %v", out.String(), err)
	}
	for _, id := range acked {
		waitJob(t, c, id, func(j api.Job) bool { return j.State == "succeeded" })
	}
	jobs, err := c.Jobs(ctx, nil)
	if err != nil || len(jobs) != 1+len(acked) {
		t.Fatalf("%d jobs after restart, want %d: %v", len(jobs), 1+len(acked), err)
	}
	acct, err := c.Acct(ctx, nil)
	if err != nil || len(acct.Records) != 1+len(acked) {
		t.Fatalf("%d accounting records, want %d: %v", len(acct.Records), 1+len(acked), err)
	}
}

// jobsAsNobody lets the admin tenant run jobs on a server run by root,
// which runs each job as its tenant's Unix user: as nobody, with the
// test's directory (the database's, holding the tasks') passable.
func jobsAsNobody(t *testing.T, c *client.Client, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	nobody := "nobody"
	if _, err := c.UpdateTenant(context.Background(), "admin", api.TenantUpdate{UnixUser: &nobody}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
}

func waitJob(t *testing.T, c *client.Client, id string, cond func(api.Job) bool) api.Job {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := c.Job(context.Background(), id)
		if err == nil && cond(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: condition not met after 30 s: %+v, %v", id, j, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCLIAgainstServer drives the CLI commands against a real server.
func TestCLIAgainstServer(t *testing.T) {
	dir := t.TempDir()
	c := cliServer(t, filepath.Join(dir, "corral.db"), "2xA100-80GB")
	cli := func(args ...string) string {
		t.Helper()
		var out, errOut strings.Builder
		if code := run(args, &out, &errOut); code != 0 {
			t.Fatalf("corral %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		return out.String()
	}
	jobFile := filepath.Join(dir, "job.yaml")
	os.WriteFile(jobFile, []byte("name: fromfile\ncommand: [sh, -c, 'echo from file; sleep 1']\ngpus: 1\ntime: 1m\n"), 0o600)
	if out := cli("submit", "--gpus", "2", "--name", "first", "--", "sh", "-c", "echo cli works; sleep 3"); !strings.Contains(out, "Submitted job j000001") {
		t.Fatalf("submit: %q", out)
	}
	if out := cli("submit", "-f", jobFile, "--priority", "-1"); !strings.Contains(out, "Submitted job j000002") {
		t.Fatalf("submit -f: %q", out)
	}
	waitJob(t, c, "j000001", func(j api.Job) bool { return j.State == "running" })
	// The reason is set by the first cycle that looks at the job after it arrives.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out := cli("queue")
		if strings.Contains(out, "j000001  first") && strings.Contains(out, "waiting for GPUs") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue:\n%s", out)
		}
	}
	if out := cli("gpus"); !strings.Contains(out, "A100-80GB") || !strings.Contains(out, "j000001/0(admin)") {
		t.Fatalf("gpus:\n%s", out)
	}
	if out := cli("explain", "j000002"); !strings.Contains(out, "j000002 is pending") {
		t.Fatalf("explain:\n%s", out)
	}
	if out := cli("logs", "-f", "j000001"); out != "cli works\n" {
		t.Fatalf("logs -f: %q", out)
	}
	waitJob(t, c, "j000002", func(j api.Job) bool {
		return j.State == "succeeded" && j.Request.Priority == -1 && j.Request.Name == "fromfile"
	})
	if out := cli("acct", "--csv"); strings.Count(out, "\n") != 3 || !strings.Contains(out, "j000002,admin,fromfile,1,A100-80GB") {
		t.Fatalf("acct --csv:\n%s", out)
	}
	history := cli("acct", "--jobs")
	checkAcctJobs(t, history, "j000002", -1)
	// The history names the machine it ran on, and replays there.
	if !strings.HasPrefix(history, "# fleet: nodes=1 gpus_per_node=2 gpu_model=A100-80GB mig=none time_slices=4") {
		t.Fatalf("acct --jobs does not start with the server's machine:\n%s", history)
	}
	historyFile := filepath.Join(dir, "history.csv")
	os.WriteFile(historyFile, []byte(history), 0o600)
	if out := cli("sim", "--workload", "jobs", historyFile, "--policies", "corral"); !strings.Contains(out,
		"(on the machines it ran on: 1 node(s) of 2 A100-80GB (4 time slices each)): 2 jobs on 1 nodes, 2 GPUs") {
		t.Fatalf("sim of acct --jobs:\n%s", out)
	}
	cli("submit", "--gpus", "1", "sleep", "60")
	waitJob(t, c, "j000003", func(j api.Job) bool { return j.State == "running" })
	if out := cli("cancel", "j000003"); !strings.Contains(out, "Stopping job j000003") {
		t.Fatalf("cancel: %q", out)
	}
	waitJob(t, c, "j000003", func(j api.Job) bool { return j.State == "cancelled" })
	if out := cli("queue", "--all"); !strings.Contains(out, "cancelled") {
		t.Fatalf("queue --all:\n%s", out)
	}
	out := cli("server", "tenant", "create", "--quota", "1", "bob")
	_, bobToken, ok := strings.Cut(out, "export CORRAL_TOKEN=")
	if !ok {
		t.Fatalf("tenant create: %q", out)
	}
	if out := cli("server", "tenant", "list"); !strings.Contains(out, "bob     1 GPUs") {
		t.Fatalf("tenant list:\n%s", out)
	}
	var tenants api.TenantList
	if out := cli("server", "tenant", "list", "--json"); json.Unmarshal([]byte(out), &tenants) != nil || len(tenants.Tenants) != 2 {
		t.Fatalf("tenant list --json:\n%s", out)
	}
	if out := cli("queue", "--all", "--yaml"); !strings.HasPrefix(out, "jobs:\n") || !strings.Contains(out, "id: j000003") {
		t.Fatalf("queue --all --yaml:\n%s", out)
	}
	if out := cli("server", "tenant", "tokens", "bob", "--yaml"); !strings.HasPrefix(out, "tenant: bob\ntokens:\n") {
		t.Fatalf("tenant tokens --yaml:\n%s", out)
	}
	cli("server", "tenant", "create", "--quota", "1", "--cohort", "lab", "carol")
	if out := cli("server", "tenant", "set", "bob", "--cohort", "lab"); !regexp.MustCompile(`bob +1 GPUs +- +lab `).MatchString(out) {
		t.Fatalf("tenant set --cohort:\n%s", out)
	}
	if out := cli("server", "tenant", "set", "bob", "--budget", "100/720h"); !regexp.MustCompile(`bob +1 GPUs +100/720h +lab `).MatchString(out) {
		t.Fatalf("tenant set --budget:\n%s", out)
	}
	if out := cli("server", "tenant", "set", "bob", "--disk", "10G"); !regexp.MustCompile(`bob +1 GPUs +100/720h +lab +10G `).MatchString(out) {
		t.Fatalf("tenant set --disk:\n%s", out)
	}
	var diskErr strings.Builder
	if code := run([]string{"server", "tenant", "set", "bob", "--disk", "lots"}, io.Discard, &diskErr); code == 0 || !strings.Contains(diskErr.String(), "--disk") {
		t.Fatalf("a malformed --disk: exit %d, %q", code, diskErr.String())
	}
	var cohortErr strings.Builder
	if code := run([]string{"server", "tenant", "create", "--cohort", "lab", "dave"}, io.Discard, &cohortErr); code == 0 || !strings.Contains(cohortErr.String(), "needs a GPU quota") {
		t.Fatalf("a cohort without a quota: exit %d, %q", code, cohortErr.String())
	}
	if out := cli("queue", "--all", "--token", strings.TrimSpace(bobToken)); strings.Contains(out, "j0000") {
		t.Fatalf("bob sees the admin's jobs:\n%s", out)
	}
	var errOut strings.Builder
	if code := run([]string{"submit", "--gpus", "-1", "true"}, io.Discard, &errOut); code == 0 || !strings.Contains(errOut.String(), "negative") {
		t.Fatalf("negative gpus: exit %d, %q", code, errOut.String())
	}
	t.Setenv("CORRAL_TOKEN", "")
	if code := run([]string{"queue"}, io.Discard, &errOut); code == 0 {
		t.Fatal("queue without a token succeeded")
	}
}

func TestServerDevPrintsTokenAndExportLine(t *testing.T) {
	srv := startServerChild(t, "--dev", "--db", filepath.Join(t.TempDir(), "corral.db"), "--listen", anyLoopbackPort, "--new-admin-token")
	if !strings.HasPrefix(srv.token, "crl_") {
		t.Fatalf("token %q", srv.token)
	}
	c := &client.Client{Server: srv.url, Token: srv.token}
	who, err := c.Whoami(context.Background())
	if err != nil || !who.Admin {
		t.Fatalf("whoami %+v, %v: want the admin", who, err)
	}
	gpus, err := c.GPUs(context.Background())
	if err != nil || len(gpus) != 8 || gpus[0].Model != "H100-80GB" {
		t.Fatalf("dev GPUs %+v, %v: want 8 H100-80GB", gpus, err)
	}
}

func TestServerFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"server", "--gpus", "2xL4"}, "no database"},
		{[]string{"server", "--dev", "--tls-cert", "x.pem"}, "both --tls-cert and --tls-key"},
		{[]string{"server", "--dev", "--gpus", "3xNoSuchGPU"}, "NoSuchGPU"},
		{[]string{"submit", "--token", "t", "--server", "ftp://x"}, "no command"},
		{[]string{"submit", "--token", "t", "--server", "ftp://x", "--gpus", "1", "true"}, "want http://"},
		{[]string{"submit", "--token", "t", "--mem", "lots", "true"}, "memory"},
		{[]string{"logs", "--token", "t"}, "one job ID"},
	} {
		var errOut strings.Builder
		if code := run(tc.args, io.Discard, &errOut); code == 0 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("corral %v: exit %d, stderr %q; want an error mentioning %q", tc.args, code, errOut.String(), tc.want)
		}
	}
}

func TestCommandHelpTeaches(t *testing.T) {
	for _, cmd := range []string{"server", "submit", "queue", "gpus", "cancel", "logs", "acct", "explain"} {
		var out strings.Builder
		if code := run([]string{cmd, "-h"}, &out, io.Discard); code != 0 {
			t.Errorf("corral %s -h: exit %d", cmd, code)
		}
		if !strings.Contains(out.String(), "Usage: corral "+cmd) || !strings.Contains(out.String(), "-") {
			t.Errorf("corral %s -h:\n%s", cmd, out.String())
		}
	}
}

// TestSubmitByGPUMemory submits jobs that ask for GPU memory in all to a
// real server on 8 declared H100s: the core picks the count, corral queue
// and explain say what it chose, and asks the machine can never meet
// are refused at submit naming the model, its memory and the ask.
func TestSubmitByGPUMemory(t *testing.T) {
	dir := t.TempDir()
	c := cliServer(t, filepath.Join(dir, "corral.db"), "8xH100-80GB")
	cli := func(args ...string) (string, string, int) {
		t.Helper()
		var out, errOut strings.Builder
		code := run(args, &out, &errOut)
		return out.String(), errOut.String(), code
	}
	if out, errOut, code := cli("submit", "--gpu-mem", "300G", "--name", "ft", "--", "sleep", "30"); code != 0 || !strings.Contains(out, "Submitted job j000001") {
		t.Fatalf("submit --gpu-mem 300G: exit %d, %s%s", code, out, errOut)
	}
	waitJob(t, c, "j000001", func(j api.Job) bool { return j.State == "running" && len(j.Tasks) == 1 && len(j.Tasks[0].GPUs) == 4 })
	if out, _, _ := cli("submit", "--gpu-mem", "600G", "--gpu-model", "H100-80GB", "--name", "big", "--", "true"); !strings.Contains(out, "Submitted job j000002") {
		t.Fatalf("submit --gpu-mem 600G: %q", out)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out, _, _ := cli("queue")
		if regexp.MustCompile(`j000001 +ft .* 4 \(4x H100-80GB \(320Gi\) for 300Gi\)`).MatchString(out) &&
			regexp.MustCompile(`j000002 +big .* 8 \(8x H100-80GB \(640Gi\) for 600Gi\)`).MatchString(out) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue lacks the shapes chosen:\n%s", out)
		}
	}
	if out, _, _ := cli("explain", "j000002"); !strings.Contains(out, "asks 600Gi of GPU memory, models H100-80GB: the scheduler chose 8x H100-80GB (640Gi)") {
		t.Fatalf("explain lacks the shape it waits for:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--gpu-mem", "300G", "--gpu-mem-per-gpu", "100G"}, "H100-80GB has 80Gi per GPU, under the 100Gi asked"},
		{[]string{"--gpu-mem", "300G", "--gpu-model", "A100-80GB,H200"}, "H100-80GB (80Gi) is not among the allowed models"},
		{[]string{"--gpu-mem", "1T"}, "the fleet's H100-80GB nodes cannot hold 14x H100-80GB as 2 tasks of 7 (1120Gi)"},
		{[]string{"--gpu-mem", "300G", "--gpus", "2"}, "--gpu-mem asks for GPU memory in all"},
		{[]string{"--gpu-mem", "lots"}, `invalid value "lots" for flag -gpu-mem`},
		{[]string{"--gpu-model", "H100"}, "--gpu-mem-per-gpu and --gpu-model go with --gpu-mem"},
	} {
		out, errOut, code := cli(append(append([]string{"submit"}, tc.args...), "true")...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("submit %v: exit %d, %s%s; want a refusal naming %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

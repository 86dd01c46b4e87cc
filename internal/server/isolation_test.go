package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
	"golang.org/x/sys/unix"
)

// isoHarness is a harness whose Config edit changes; it removes the
// server's cgroups once the harness has killed every task.
func isoHarness(t *testing.T, gpus int, edit func(*Config)) *harness {
	t.Helper()
	dir, st := tempStore(t)
	cfg := Config{Store: st, GPUs: fakeGPUs(gpus), StateDir: filepath.Join(dir, "tasks"), Interval: 50 * time.Millisecond}
	edit(&cfg)
	srv, err := New(cfg)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.iso.cgroups.Remove(); err != nil {
			t.Errorf("removing the server's cgroups: %v", err)
		}
	})
	return startHarness(t, srv, st)
}

// A job's environment is what its submitter sent and corral's variables:
// nothing of the server's environment, which holds the admin token when
// the server was started the README's way.
func TestJobEnvironmentHoldsNoServerVariableNorToken(t *testing.T) {
	h := newHarness(t, 1)
	t.Setenv("CORRAL_TOKEN", h.admin.Token)
	t.Setenv("CORRAL_TEST_SERVER_ONLY", "the server's")
	c := h.tenant("eve", 0)
	j := h.submit(c, api.JobRequest{GPUs: 1, Env: []string{"FROM_CLIENT=yes"}, Command: []string{"env"}})
	h.waitState(c, j.ID, store.Succeeded, 20*time.Second)
	out := h.logs(c, j.ID, 0)
	if strings.Contains(out, h.admin.Token) || strings.Contains(out, "crl_") {
		t.Errorf("the job's environment holds a token:\n%s", out)
	}
	ours := map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "FROM_CLIENT": true,
		"CORRAL_JOB_ID": true, "CORRAL_TENANT": true, "CUDA_VISIBLE_DEVICES": true, "NVIDIA_VISIBLE_DEVICES": true,
		"CUDA_DEVICE_ORDER": true, "PWD": true, "OLDPWD": true, "SHLVL": true, "_": true,
		"CORRAL_JOB_NAME": true, "CORRAL_SUBMIT_DIR": true}
	for _, k := range strings.Fields(`SLURM_JOB_ID SLURM_JOBID SLURM_JOB_NAME SLURM_JOB_USER SLURM_JOB_ACCOUNT SLURM_SUBMIT_DIR
		SLURM_SUBMIT_HOST SLURM_JOB_NODELIST SLURM_NODELIST SLURMD_NODENAME SLURM_JOB_NUM_NODES SLURM_NNODES SLURM_NODEID
		SLURM_PROCID SLURM_LOCALID SLURM_RESTART_COUNT SLURM_JOB_GPUS SLURM_GPUS_ON_NODE`) {
		ours[k] = true // what sbatch sets, as corral sets it (slurmenv.go)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if key, _, _ := strings.Cut(line, "="); !ours[key] {
			t.Errorf("the job got %s, which neither its submitter nor corral set", line)
		}
	}
	for _, want := range []string{"FROM_CLIENT=yes", "CORRAL_JOB_ID=" + j.ID, "CORRAL_TENANT=eve", "PATH=" + executor.DefaultPath} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("the job's environment lacks %s:\n%s", want, out)
		}
	}
}

// requireRoot skips a test that needs root: users, cgroups, devices.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (run as root to test jobs run as their tenants' users, cgroups and device fencing, as CI does)")
	}
}

// unixUser creates a Unix user for the test, removed when it ends.
func unixUser(t *testing.T) executor.User {
	t.Helper()
	requireRoot(t)
	var raw [3]byte
	rand.Read(raw[:])
	name := "crltest" + hex.EncodeToString(raw[:])
	var out []byte
	var err error
	for range 50 { // useradd fails while another process holds the user database's lock
		out, err = exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Skipf("useradd %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() {
		for range 50 {
			if out, err = exec.Command("userdel", name).CombinedOutput(); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("userdel %s: %v: %s", name, err, out)
	})
	u, err := executor.LookupUser(name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// userTenant creates a tenant whose jobs run as u and returns its client.
func (h *harness) userTenant(name string, u executor.User) *client.Client {
	h.t.Helper()
	ctx := context.Background()
	if _, err := h.admin.CreateTenant(ctx, api.TenantRequest{Name: name, UnixUser: u.Name}); err != nil {
		h.t.Fatal(err)
	}
	tok, err := h.admin.IssueToken(ctx, name)
	if err != nil {
		h.t.Fatal(err)
	}
	return &client.Client{Server: h.url, Token: tok.Token}
}

// Each job runs as its tenant's Unix user: tenant B's job can read
// neither tenant A's task directory and logs nor the database nor the
// list of jobs, and cannot signal A's processes.
func TestJobsRunAsTheirTenantsUsers(t *testing.T) {
	ua, ub := unixUser(t), unixUser(t)
	h := isoHarness(t, 2, func(c *Config) {
		c.RunAs, c.Cgroups = RunAsTenant, true
		os.Chmod(filepath.Dir(c.StateDir), 0o711) // the test's temp dir: users pass through it
		os.Chmod(filepath.Dir(filepath.Dir(c.StateDir)), 0o711)
	})
	alice, bob := h.userTenant("alice", ua), h.userTenant("bob", ub)
	ja := h.submit(alice, api.JobRequest{GPUs: 1, Command: sh(`echo alice-secret > secret.txt; id -u; while :; do sleep 0.05; done`)})
	ja = h.wait(alice, ja.ID, 20*time.Second, "running with a secret", func(j api.Job) bool {
		return j.State == "running" && len(j.Tasks) == 1 && j.Tasks[0].PID > 0 && strings.Contains(h.logs(alice, j.ID, 0), "\n")
	})
	jobA := h.job(ja.ID)
	attempt, work := h.srv.taskDir(&jobA), h.srv.workDir(&jobA)
	probe := fmt.Sprintf(`id -u
cat %[1]s/secret.txt || echo DENIED secret
ls %[2]s || echo DENIED attempt
cat %[2]s/%[3]s-0.out || echo DENIED log
cat %[4]s || echo DENIED database
ls %[5]s || echo DENIED state
kill -0 %[6]d 2>/dev/null && echo KILLABLE || echo DENIED kill
`, work, attempt, ja.ID, h.st.Path(), h.srv.cfg.StateDir, ja.Tasks[0].PID)
	jb := h.submit(bob, api.JobRequest{GPUs: 1, Command: sh(probe)})
	h.waitState(bob, jb.ID, store.Succeeded, 20*time.Second)
	out := h.logs(bob, jb.ID, 0)
	if !strings.HasPrefix(out, fmt.Sprint(ub.UID)+"\n") {
		t.Errorf("bob's job does not run as %s (uid %d):\n%s", ub.Name, ub.UID, out)
	}
	if got := h.logs(alice, ja.ID, 0); got != fmt.Sprint(ua.UID)+"\n" {
		t.Errorf("alice's job does not run as %s (uid %d): %q", ua.Name, ua.UID, got)
	}
	for _, want := range []string{"DENIED secret", "DENIED attempt", "DENIED log", "DENIED database", "DENIED state", "DENIED kill"} {
		if !strings.Contains(out, want) {
			t.Errorf("bob's job was not refused (%s):\n%s", want, out)
		}
	}
	if strings.Contains(out, "alice-secret") || strings.Contains(out, "KILLABLE") {
		t.Errorf("bob's job reached alice's job:\n%s", out)
	}
	checkModes(t, map[string]os.FileMode{h.st.Path(): 0o600, h.srv.cfg.StateDir: 0o711, attempt: 0o711, work: 0o700})
	if fi, err := os.Stat(work); err != nil || fi.Sys().(*syscall.Stat_t).Uid != ua.UID {
		t.Errorf("alice's work directory is not hers: %v", err)
	}
}

func checkModes(t *testing.T, want map[string]os.FileMode) {
	t.Helper()
	for p, mode := range want {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v, mode %v, want %v", p, err, fi.Mode().Perm(), mode)
		}
	}
}

func (h *harness) job(id string) store.Job {
	h.t.Helper()
	n, err := store.ParseID(id)
	if err != nil {
		h.t.Fatal(err)
	}
	j, err := h.st.Get(n)
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

// On a server that runs jobs as their tenants, a tenant needs a Unix user
// to submit, and none maps to root.
func TestTenantsNeedAUnixUserThatIsNotRoot(t *testing.T) {
	u := unixUser(t)
	h := isoHarness(t, 1, func(c *Config) { c.RunAs = RunAsTenant })
	ctx := context.Background()
	nobody := h.tenant("nobody-mapped", 0)
	_, err := nobody.Submit(ctx, api.JobRequest{GPUs: 1, Command: []string{"true"}})
	if !isStatus(err, http.StatusForbidden) || !strings.Contains(err.Error(), "--unix-user") {
		t.Errorf("a tenant without a Unix user submitted: %v", err)
	}
	for _, req := range []api.TenantRequest{
		{Name: "root1", UnixUser: "root"},
		{Name: "root2", UnixUser: u.Name, UID: u.UID + 1}, // not the account's uid
		{Name: "ghost", UnixUser: "corral-no-such-user"},  // no such account
		{Name: "ghost2", UID: 4000000000},                 // a uid without an account needs a gid
	} {
		if _, err := h.admin.CreateTenant(ctx, req); !isStatus(err, http.StatusBadRequest) {
			t.Errorf("tenant %+v: %v, want 400", req, err)
		}
	}
	name := u.Name
	tn, err := h.admin.UpdateTenant(ctx, "nobody-mapped", api.TenantUpdate{UnixUser: &name})
	if err != nil || tn.UnixUser != u.Name {
		t.Fatalf("mapping a tenant to %s: %+v, %v", u.Name, tn, err)
	}
	if _, err := nobody.Submit(ctx, api.JobRequest{GPUs: 1, Command: []string{"true"}}); err != nil {
		t.Errorf("a tenant with a Unix user cannot submit: %v", err)
	}
}

func isStatus(err error, code int) bool {
	var ae *client.Error
	return errors.As(err, &ae) && ae.Status == code
}

// A task whose supervisor is killed (kill -9) is gone within the job's
// grace period, with every process it left, even one that left its
// process group: its cgroup is killed when the server notices.
func TestKilledSupervisorsTaskIsGoneWithinTheGrace(t *testing.T) {
	requireRoot(t)
	h := isoHarness(t, 1, func(c *Config) { c.Cgroups = true })
	if h.srv.iso.cgroups == nil {
		t.Skipf("no cgroups here: %v", h.srv.iso.problems)
	}
	c := h.tenant("team", 0)
	j := h.submit(c, api.JobRequest{GPUs: 1, Grace: "3s", Command: sh(`setsid sleep 300 & echo $! > escaped.pid; sleep 300`)})
	h.waitState(c, j.ID, store.Running, 20*time.Second)
	job := h.job(j.ID)
	escaped := waitPID(t, filepath.Join(h.srv.workDir(&job), "escaped.pid"))
	t.Cleanup(func() { unix.Kill(escaped, unix.SIGKILL) })
	var st struct{ Supervisor int }
	if err := json.Unmarshal(waitFile(t, filepath.Join(h.srv.taskDir(&job), j.ID+"-0.state")), &st); err != nil {
		t.Fatal(err)
	}
	if err := unix.Kill(st.Supervisor, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	h.wait(c, j.ID, 3*time.Second, "ended", func(j api.Job) bool { return j.State != "running" })
	for _, pid := range []int{job.Tasks[0].PID, escaped} {
		if running(pid) {
			t.Errorf("process %d of the job still runs %v after its supervisor was killed", pid, time.Since(killed))
		}
	}
}

// A job may open the device files of its GPUs and no other GPU's:
// stand-ins with NVIDIA's major number fail to open with ENXIO (no
// driver; ENODEV under NVIDIA's driver, which has no such minor) when
// allowed and with EPERM when fenced off.
func TestJobOpensOnlyItsGPUs(t *testing.T) {
	requireRoot(t)
	dev := standInGPUs(t, 4)
	h := isoHarness(t, 4, func(c *Config) { c.Cgroups, c.DevDir = true, dev })
	if h.srv.iso.cgroups == nil || h.srv.iso.cgroups.Devices == "" {
		t.Skipf("devices cannot be fenced here: %v", h.srv.iso.problems)
	}
	c := h.tenant("team", 0)
	j := h.submit(c, api.JobRequest{GPUs: 1, Command: sh(`echo "gpu $CUDA_VISIBLE_DEVICES"; for i in 0 1 2 3; do cat ` + dev + `/nvidia$i; done 2>&1; true`)})
	h.waitState(c, j.ID, store.Succeeded, 20*time.Second)
	out := strings.ToLower(h.logs(c, j.ID, 0))
	gpu := -1
	fmt.Sscanf(out, "gpu %d", &gpu)
	for i := range 4 {
		wants := []string{unix.EPERM.Error()}
		if i == gpu { // no driver: ENXIO; NVIDIA's, loaded, has no such minor: ENODEV
			wants = []string{unix.ENXIO.Error(), unix.ENODEV.Error()}
		}
		if !containsAny(out, dev+"/nvidia"+strconv.Itoa(i)+": ", wants) {
			t.Errorf("GPU %d (the job has GPU %d): want %q:\n%s", i, gpu, wants, out)
		}
	}
	iso := h.gpuList().Isolation
	if iso == nil || !iso.Devices || iso.Cgroups == "none" {
		t.Errorf("/v1/gpus does not say that devices are fenced: %+v", iso)
	}
}

func containsAny(s, prefix string, wants []string) bool {
	for _, w := range wants {
		if strings.Contains(s, prefix+w) {
			return true
		}
	}
	return false
}

func (h *harness) gpuList() api.GPUList {
	h.t.Helper()
	l, err := h.admin.GPUList(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return l
}

// standInGPUs makes /dev/nvidia0..n-1 stand-ins in a directory of their
// own: character devices 195:200+i, which no driver serves.
func standInGPUs(t *testing.T, n int) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "corral-devices-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	for i := range n {
		p := filepath.Join(dir, "nvidia"+strconv.Itoa(i))
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(195, uint32(200+i)))); err != nil {
			t.Skipf("mknod %s: %v", p, err)
		}
		os.Chmod(p, 0o666)
	}
	return dir
}

// Without cgroups, the server and /v1/gpus say what is lost.
func TestGPUsSayWhatIsolationLacks(t *testing.T) {
	h := newHarness(t, 1)
	iso := h.gpuList().Isolation
	if iso == nil || iso.RunAs != "server" || iso.Cgroups != "none" || iso.Devices || len(iso.Problems) < 2 {
		t.Fatalf("isolation %+v", iso)
	}
	if all := strings.Join(iso.Problems, "\n"); !strings.Contains(all, "no cgroups") || !strings.Contains(all, "every job runs as") {
		t.Errorf("problems do not say what is lost:\n%s", all)
	}
}

// A one-tenant server (not root, no --single-user) takes one tenant's
// jobs at a time, and refuses to start on the jobs of two.
func TestOneTenantServer(t *testing.T) {
	h := isoHarness(t, 2, func(c *Config) { c.RunAs = RunAsServerOneTenant })
	ctx := context.Background()
	alice, bob := h.tenant("alice", 0), h.tenant("bob", 0)
	ja := h.submit(alice, api.JobRequest{GPUs: 1, Command: sh("sleep 30")})
	h.submit(alice, api.JobRequest{GPUs: 1, Command: sh("sleep 30")})
	if _, err := bob.Submit(ctx, api.JobRequest{GPUs: 1, Command: []string{"true"}}); !isStatus(err, http.StatusConflict) || !strings.Contains(err.Error(), "--single-user") {
		t.Errorf("bob submitted while alice's jobs run: %v", err)
	}
	if _, err := alice.CancelJobs(ctx, api.CancelRequest{States: []string{"pending", "running"}}); err != nil {
		t.Fatal(err)
	}
	h.waitState(alice, ja.ID, store.Cancelled, 20*time.Second)
	h.wait(alice, ja.ID, 20*time.Second, "alone", func(api.Job) bool {
		_, err := bob.Submit(ctx, api.JobRequest{GPUs: 1, Command: []string{"true"}})
		return err == nil
	})

	dir, st := tempStore(t)
	defer st.Close()
	for _, tenant := range []string{"alice", "bob"} {
		if _, err := st.Submit(tenant, store.Spec{Command: []string{"true"}, GPUs: 1, Tasks: 1}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	_, err := New(Config{Store: st, GPUs: fakeGPUs(1), StateDir: filepath.Join(dir, "tasks"), RunAs: RunAsServerOneTenant})
	if err == nil || !strings.Contains(err.Error(), "alice, bob") || !strings.Contains(err.Error(), "--single-user") {
		t.Errorf("a one-tenant server started on the jobs of two tenants: %v", err)
	}
}

// waitPID waits for a file that holds a pid and returns it.
func waitPID(t *testing.T, path string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(string(waitFile(t, path))))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitFile waits until path holds a whole line, and returns it.
func waitFile(t *testing.T, path string) []byte {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(path); err == nil && len(data) > 0 && (data[len(data)-1] == '\n' || data[len(data)-1] == '}') {
			return data
		}
	}
	t.Fatalf("%s did not appear", path)
	return nil
}

// running reports whether process pid runs: it exists and is no zombie.
func running(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	rest := string(data)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// The minor number of a GPU's /dev/nvidiaN comes from the driver's
// information file, as an H200's reads.
func TestParseDriverInfo(t *testing.T) {
	text := "Model: \t\t NVIDIA H200\nIRQ:   \t\t 41\nGPU UUID: \t GPU-17070c7d-3aa3-721e-6fbf-08849cadda34\n" +
		"Bus Location: \t 0000:00:06.0\nDevice Minor: \t 3\nGPU Excluded:\t No\n"
	uuid, minor, ok := parseDriverInfo(text)
	if !ok || uuid != "GPU-17070c7d-3aa3-721e-6fbf-08849cadda34" || minor != 3 {
		t.Errorf("got %q %d %v", uuid, minor, ok)
	}
	if _, _, ok := parseDriverInfo("Model: x\n"); ok {
		t.Error("a file without a minor number parsed")
	}
}

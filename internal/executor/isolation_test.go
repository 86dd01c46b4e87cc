//go:build linux

package executor

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A task's environment is what its spec says, on top of a PATH and its
// user's HOME, USER and LOGNAME: nothing of the server's, whose
// environment may hold an admin token.
func TestTaskEnvironmentHoldsNothingOfTheServer(t *testing.T) {
	t.Setenv("CORRAL_TOKEN", "crl_server_admin_token")
	t.Setenv("CORRAL_TEST_SERVER_SECRET", "only the server knows")
	spec := shSpec(t, "env")
	spec.Env = []string{"FROM_SUBMITTER=yes"}
	task := start(t, spec)
	if res := waitDone(t, task); res.ExitCode != 0 {
		t.Fatalf("env failed: %+v", res)
	}
	env := readEnv(t, task.StdoutPath())
	allowed := map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "FROM_SUBMITTER": true,
		"CUDA_VISIBLE_DEVICES": true, "NVIDIA_VISIBLE_DEVICES": true, "PWD": true, "OLDPWD": true, "SHLVL": true, "_": true}
	for k, v := range env {
		if !allowed[k] {
			t.Errorf("the task got %s=%q, which neither it nor corral set", k, v)
		}
		if strings.Contains(v, "crl_") {
			t.Errorf("the task got a token in %s=%q", k, v)
		}
	}
	if env["FROM_SUBMITTER"] != "yes" {
		t.Errorf("the submitter's variable is missing: %v", env)
	}
}

// requireRoot skips a test that needs root: switching users, cgroups,
// device nodes.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (run as root to test users, cgroups and device fencing, as CI does)")
	}
}

// testUser creates a Unix user for the test and removes it when the test
// ends.
func testUser(t *testing.T) User {
	t.Helper()
	requireRoot(t)
	var raw [3]byte
	rand.Read(raw[:])
	name := "crltest" + hex.EncodeToString(raw[:])
	addUser(t, name)
	u, err := LookupUser(name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// addUser runs useradd, retrying while another process holds the user
// database's lock, and arranges for userdel.
func addUser(t *testing.T, name string) {
	t.Helper()
	var out []byte
	var err error
	for range 50 {
		out, err = execOutput("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name)
		if err == nil {
			t.Cleanup(func() { removeUser(t, name) })
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Skipf("useradd %s: %v: %s", name, err, out)
}

func removeUser(t *testing.T, name string) {
	var out []byte
	var err error
	for range 50 {
		if out, err = execOutput("userdel", name); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("userdel %s: %v: %s", name, err, out)
}

// testCgroups opens cgroups of a name of the test's own, which are
// removed with every task cgroup under them when the test ends.
func testCgroups(t *testing.T) *Cgroups {
	t.Helper()
	requireRoot(t)
	var raw [4]byte
	rand.Read(raw[:])
	c, err := OpenCgroups("corral-test-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(raw[:]))
	if err != nil {
		t.Skipf("no cgroups to test with: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Remove(); err != nil {
			t.Errorf("removing the test's cgroups: %v", err)
		}
	})
	return c
}

func TestTaskRunsAsItsUser(t *testing.T) {
	u := testUser(t)
	spec := shSpec(t, "id -u; id -g; id -G; echo $HOME $USER $LOGNAME")
	spec.User, spec.WorkDir = &u, "/"
	task := start(t, spec)
	if res := waitDone(t, task); res.ExitCode != 0 {
		t.Fatalf("got %+v: %s", res, readFile(t, task.StderrPath()))
	}
	want := strings.Join([]string{fmt.Sprint(u.UID), fmt.Sprint(u.GID), fmt.Sprint(u.GID), "/nonexistent " + u.Name + " " + u.Name}, "\n")
	if got := strings.TrimSpace(readFile(t, task.StdoutPath())); got != want {
		t.Errorf("the task says\n%s\nwant\n%s", got, want)
	}
	if fi, err := os.Stat(task.StdoutPath()); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the task's log: %v, mode %v: want no access for others", err, fi.Mode())
	}
}

// A task whose supervisor is killed (kill -9) is gone, every process of
// it, even one that left its process group, once the server notices:
// its cgroup is killed.
func TestKilledSupervisorLeavesNoProcess(t *testing.T) {
	c := testCgroups(t)
	spec := shSpec(t, "setsid sleep 300 & echo $! > escaped.pid; sleep 300")
	spec.Cgroups = c
	task := start(t, spec)
	escaped := readPID(t, filepath.Join(spec.Dir, "escaped.pid"))
	t.Cleanup(func() { killPID(escaped) })
	var st state
	if err := readJSON(spec.statePath(), &st); err != nil {
		t.Fatal(err)
	}
	if err := killPID(st.Supervisor); err != nil {
		t.Fatal(err)
	}
	select {
	case <-task.Done():
	case <-time.After(DefaultGrace):
		t.Fatal("the task of a killed supervisor is not done after the grace period")
	}
	if res := task.Result(); !res.Lost {
		t.Errorf("got %+v, want lost", res)
	}
	if running(task.PID()) || running(escaped) {
		t.Errorf("processes of the task still run: main %v, escaped %v", running(task.PID()), running(escaped))
	}
	for _, d := range st.Cgroup {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup %s is left", d)
		}
	}
}

// A stopped task's cgroup goes with it: what it forked is killed.
func TestStopRemovesTheCgroup(t *testing.T) {
	c := testCgroups(t)
	spec := shSpec(t, "setsid sleep 300 & echo $! > escaped.pid; sleep 300")
	spec.Cgroups = c
	task := start(t, spec)
	escaped := readPID(t, filepath.Join(spec.Dir, "escaped.pid"))
	t.Cleanup(func() { killPID(escaped) })
	task.Stop(time.Second)
	waitDone(t, task)
	if running(escaped) {
		t.Errorf("a process that left the task's group survived the stop")
	}
	for _, h := range c.Hierarchies {
		if _, err := os.Stat(filepath.Join(h.Dir, spec.ID)); err == nil {
			t.Errorf("the task's cgroup is left in %s", h.Dir)
		}
	}
}

func TestCgroupLimits(t *testing.T) {
	c := testCgroups(t)
	if !c.Has("memory") && !c.Has("cpu") {
		t.Skipf("no memory nor cpu controller: %s", c)
	}
	spec := shSpec(t, "while [ ! -e go ]; do sleep 0.02; done; exec dd if=/dev/zero of=/dev/null bs=256M count=1")
	spec.Cgroups, spec.MemoryBytes, spec.CPUMilli = c, 64<<20, 500
	task := start(t, spec)
	for _, h := range c.Hierarchies {
		dir := filepath.Join(h.Dir, spec.ID)
		for _, check := range limitFiles(h) {
			if got := strings.TrimSpace(readFile(t, filepath.Join(dir, check[0]))); got != check[1] {
				t.Errorf("%s: %q, want %q", check[0], got, check[1])
			}
		}
	}
	os.WriteFile(filepath.Join(spec.Dir, "go"), nil, 0o600)
	if res := waitDone(t, task); c.Has("memory") && res.Signal != "SIGKILL" {
		t.Errorf("a task that allocates 256 MiB under a 64 MiB limit: %+v, want killed", res)
	}
}

// A task's MaxRSS is its cgroup's peak, all its processes together, as
// its memory limit counts them: two processes holding 40 MiB each at once
// peak above 80 MiB, where the largest one alone (all getrusage gives)
// is 40.
func TestMaxRSSIsTheCgroupsPeak(t *testing.T) {
	c := testCgroups(t)
	if !c.Has("memory") {
		t.Skipf("no memory controller: %s", c)
	}
	// dd fills a 40 MiB buffer and blocks writing it to a pipe that sleep
	// never reads, holding it until sleep ends.
	hold := "dd if=/dev/zero bs=40M count=1 2>/dev/null | sleep 1"
	spec := shSpec(t, hold+" & "+hold+"; wait")
	spec.Cgroups = c
	res := waitDone(t, start(t, spec))
	if res.ExitCode != 0 {
		t.Fatalf("the task: %+v", res)
	}
	if res.MaxRSSKiB < 80<<10 {
		t.Errorf("MaxRSS %d KiB, want at least 80 MiB: both processes' 40 MiB at once", res.MaxRSSKiB)
	}
}

// limitFiles are the control files that hold a 64 MiB, half-CPU limit.
func limitFiles(h Hierarchy) [][2]string {
	var out [][2]string
	for _, ctrl := range h.Controllers {
		switch {
		case ctrl == "memory" && h.V2:
			out = append(out, [2]string{"memory.max", "67108864"})
		case ctrl == "memory":
			out = append(out, [2]string{"memory.limit_in_bytes", "67108864"})
		case ctrl == "cpu" && h.V2:
			out = append(out, [2]string{"cpu.max", "50000 100000"})
		case ctrl == "cpu":
			out = append(out, [2]string{"cpu.cfs_quota_us", "50000"})
		}
	}
	return out
}

// A task may open the device files of its GPUs and no other: stand-ins
// with NVIDIA's major number 195 fail to open with ENXIO when allowed (no
// driver; with NVIDIA's driver loaded, ENODEV: it has no such minor),
// EPERM when fenced off. Both the v1 devices
// controller and the v2 eBPF program are tested where the machine has
// them.
func TestTaskOpensOnlyItsGPUs(t *testing.T) {
	c := testCgroups(t)
	u := testUser(t)
	modes := deviceModes(t, c)
	if len(modes) == 0 {
		t.Skipf("devices cannot be fenced here: %s", c)
	}
	for name, cg := range modes {
		t.Run(name, func(t *testing.T) {
			devs := standInGPUs(t, 200, 201)
			spec := shSpec(t, "cat "+devs[0]+"; cat "+devs[1]+"; cat /dev/null && echo null ok")
			spec.Cgroups, spec.User, spec.WorkDir = cg, &u, "/"
			spec.DeviceFiles = []string{devs[0], "/dev/corral-no-such-device"}
			task := start(t, spec)
			waitDone(t, task)
			out := strings.ToLower(readFile(t, task.StderrPath()) + readFile(t, task.StdoutPath()))
			if !strings.Contains(out, devs[0]+": "+unix.ENXIO.Error()) && !strings.Contains(out, devs[0]+": "+unix.ENODEV.Error()) {
				t.Errorf("the allowed stand-in did not fail as a device without a driver (ENXIO; ENODEV from NVIDIA's driver):\n%s", out)
			}
			for _, want := range []string{devs[1] + ": " + unix.EPERM.Error(), "null ok"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// On a machine with an NVIDIA GPU and its driver, a task fenced to the
// driver's control files sees no GPU, and one given /dev/nvidia0 sees it.
func TestRealGPUsAreFenced(t *testing.T) {
	smi, err := exec.LookPath("nvidia-smi")
	if _, serr := os.Stat("/dev/nvidia0"); err != nil || serr != nil {
		t.Skip("needs an NVIDIA GPU, its driver and nvidia-smi")
	}
	c := testCgroups(t)
	if c.Devices == "" {
		t.Skipf("devices cannot be fenced here: %s", c)
	}
	control := []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}
	for _, tc := range []struct {
		name  string
		files []string
		sees  bool
	}{{"no GPU", control, false}, {"GPU 0", append(control, "/dev/nvidia0"), true}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := shSpec(t, smi+" -L 2>&1; true")
			spec.Cgroups, spec.DeviceFiles = c, tc.files
			task := start(t, spec)
			waitDone(t, task)
			out := readFile(t, task.StdoutPath())
			if sees := strings.Contains(out, "GPU 0:"); sees != tc.sees {
				t.Errorf("nvidia-smi -L with %v: %q; want the GPU listed: %v", tc.files, out, tc.sees)
			}
		})
	}
}

// deviceModes are the ways devices can be fenced here: c as it is, and
// an eBPF program on its v2 hierarchy alone when c uses v1.
func deviceModes(t *testing.T, c *Cgroups) map[string]*Cgroups {
	modes := map[string]*Cgroups{}
	if c.Devices != "" {
		modes[c.Devices] = c
	}
	for _, h := range c.Hierarchies {
		if h.V2 && c.Devices != "bpf" {
			if err := probeDeviceFilter(h.Dir); err != nil {
				if os.Getenv("CORRAL_INTEGRATION") != "" {
					t.Errorf("the eBPF device fence cannot be tested on this cgroup v2 hierarchy: %v", err)
				} else {
					t.Logf("no eBPF device programs here: %v", err)
				}
				continue
			}
			modes["bpf"] = &Cgroups{Name: c.Name, Hierarchies: []Hierarchy{h}, Devices: "bpf"}
		}
	}
	return modes
}

// standInGPUs makes character device nodes 195:minor, readable and
// writable by anyone, in a directory every user can reach.
func standInGPUs(t *testing.T, minors ...uint32) []string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "corral-devices-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range minors {
		p := filepath.Join(dir, "nvidia"+strconv.Itoa(int(m)))
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(195, m))); err != nil {
			t.Skipf("mknod %s: %v", p, err)
		}
		if err := os.Chmod(p, 0o666); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// running reports whether process pid runs: it exists and is no zombie
// (a zombie has exited and holds nothing; its parent has yet to reap it).
func running(pid int) bool {
	_, err := procStart(pid)
	return err == nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func execOutput(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).CombinedOutput()
}

// Cgroup mounts are read from mountinfo: v1 hierarchies of the
// controllers tasks use, and cgroup2; nothing else.
func TestParseMountinfo(t *testing.T) {
	for _, tc := range []struct {
		line string
		want cgroupMount
		ok   bool
	}{
		{"31 24 0:27 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory", cgroupMount{dir: "/sys/fs/cgroup/memory", root: "/", ctrls: []string{"memory"}}, true},
		{"32 24 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct", cgroupMount{dir: "/sys/fs/cgroup/cpu,cpuacct", root: "/", ctrls: []string{"cpu"}}, true},
		{"29 22 0:26 /ns /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate", cgroupMount{dir: "/sys/fs/cgroup", root: "/ns", v2: true}, true},
		{"33 24 0:29 / /sys/fs/cgroup/blkio rw - cgroup cgroup rw,blkio", cgroupMount{}, false},
		{"22 1 254:0 / /my\\040disk rw - ext4 /dev/vda rw", cgroupMount{}, false},
	} {
		got, ok := parseMountinfo(tc.line)
		if ok != tc.ok || (ok && (got.dir != tc.want.dir || got.root != tc.want.root || got.v2 != tc.want.v2 || strings.Join(got.ctrls, ",") != strings.Join(tc.want.ctrls, ","))) {
			t.Errorf("%q: got %+v %v, want %+v %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
	if got := unescapeMount(`/a\040b`); got != "/a b" {
		t.Errorf("unescape: %q", got)
	}
}

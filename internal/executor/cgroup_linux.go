package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ServerLeaf is the v2 cgroup a server lives in when it delegates its
// own cgroup's subtree (systemd's DelegateSubgroup=corral-server): the
// tasks' cgroups then go beside it, under its parent, which may enable
// controllers for them because it holds no process itself.
const ServerLeaf = "corral-server"

// OpenCgroups finds the cgroup hierarchies mounted on this machine that
// this process may make cgroups in (v1 hierarchies of memory, cpu,
// devices or freezer, and the unified v2 hierarchy), makes the directory
// name under its own cgroup in each, and says how devices are fenced and
// what does not hold. It fails when no hierarchy is writable: tasks
// then run without cgroups.
func OpenCgroups(name string) (*Cgroups, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return nil, fmt.Errorf("cgroups: %q is not a directory name", name)
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	self, err := selfCgroups()
	if err != nil {
		return nil, err
	}
	c := &Cgroups{Name: name}
	var why []string
	for _, m := range mounts {
		h, problem, err := m.open(self, name)
		switch {
		case err != nil:
			why = append(why, err.Error())
		case h != nil:
			c.Hierarchies = append(c.Hierarchies, *h)
		}
		if problem != "" {
			c.Problems = append(c.Problems, problem)
		}
	}
	if len(c.Hierarchies) == 0 {
		if len(why) == 0 {
			why = []string{"this machine mounts none under /sys/fs/cgroup"}
		}
		return nil, fmt.Errorf("no writable cgroup hierarchy: %s", strings.Join(why, "; "))
	}
	c.chooseDevices()
	c.noteMissing()
	for _, h := range c.Hierarchies {
		os.Remove(h.Dir) // made again for the next task: none is left behind by a server that is killed
	}
	return c, nil
}

// chooseDevices picks how device access is fenced: the v1 devices
// controller, else an eBPF program on the v2 cgroup, if the kernel
// takes one from this process.
func (c *Cgroups) chooseDevices() {
	if c.Has("devices") {
		c.Devices = "v1"
		return
	}
	for _, h := range c.Hierarchies {
		if !h.V2 {
			continue
		}
		if err := probeDeviceFilter(h.Dir); err != nil {
			c.Problems = append(c.Problems, fmt.Sprintf("GPU devices are not fenced: no v1 devices controller, and no eBPF device program on cgroup v2: %v", err))
			return
		}
		c.Devices = "bpf"
		return
	}
	c.Problems = append(c.Problems, "GPU devices are not fenced: no devices controller")
}

// noteMissing adds the limits that are not enforced to c.Problems.
func (c *Cgroups) noteMissing() {
	for _, ctrl := range []string{"memory", "cpu", "pids"} {
		if !c.Has(ctrl) {
			c.Problems = append(c.Problems, fmt.Sprintf("no %s controller for the tasks' cgroups: %s limits are not enforced", ctrl, ctrl))
		}
	}
}

// Remove removes the tasks' cgroups (killing what still runs in them)
// and then the directories OpenCgroups made. A server never calls it:
// its tasks outlive it. Tests do. A nil Cgroups has nothing to remove.
func (c *Cgroups) Remove() error {
	if c == nil {
		return nil
	}
	var errs []error
	for _, h := range c.Hierarchies {
		leaves, _ := filepath.Glob(filepath.Join(h.Dir, "*", "cgroup.procs"))
		for _, l := range leaves {
			errs = append(errs, removeCgroup([]string{filepath.Dir(l)}, 5*time.Second))
		}
		if err := os.Remove(h.Dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("cgroups: %w", err))
		}
	}
	return errors.Join(errs...)
}

// cgroupMount is a mounted cgroup hierarchy.
type cgroupMount struct {
	dir   string   // mount point
	root  string   // the cgroup mounted there
	v2    bool     // cgroup2
	ctrls []string // v1: the controllers of usedControllers it has
}

// cgroupMounts lists the hierarchies mounted, once each, from
// /proc/self/mountinfo.
func cgroupMounts() ([]cgroupMount, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("cgroups: %w", err)
	}
	var out []cgroupMount
	seen := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		m, ok := parseMountinfo(line)
		key := strings.Join(m.ctrls, ",")
		if !ok || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, m)
	}
	return out, nil
}

// parseMountinfo reads one line of /proc/self/mountinfo; ok is false for
// anything but a cgroup2 mount or a cgroup v1 mount of a used controller.
func parseMountinfo(line string) (m cgroupMount, ok bool) {
	pre, post, found := strings.Cut(line, " - ")
	f, g := strings.Fields(pre), strings.Fields(post)
	if !found || len(f) < 5 || len(g) < 3 {
		return m, false
	}
	m.root, m.dir = unescapeMount(f[3]), unescapeMount(f[4])
	switch g[0] {
	case "cgroup2":
		m.v2 = true
		return m, true
	case "cgroup":
		for _, opt := range strings.Split(g[2], ",") {
			if slices.Contains(usedControllers, opt) {
				m.ctrls = append(m.ctrls, opt)
			}
		}
		return m, len(m.ctrls) > 0
	}
	return m, false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// selfCgroups maps each v1 controller to this process's cgroup in its
// hierarchy, and "" to its v2 cgroup, from /proc/self/cgroup.
func selfCgroups() (map[string]string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("cgroups: %w", err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			out[ctrl] = parts[2]
		}
	}
	return out, nil
}

// open makes the directory name under this process's cgroup in the
// hierarchy m, and enables the v2 controllers the tasks' cgroups can
// have. It returns nil when this process is in no cgroup of m, and a
// problem worth telling when the hierarchy is usable only in part.
func (m cgroupMount) open(self map[string]string, name string) (*Hierarchy, string, error) {
	key := ""
	if !m.v2 {
		key = m.ctrls[0]
	}
	path, ok := self[key]
	if !ok {
		return nil, "", nil
	}
	rel, ok := strings.CutPrefix(path, strings.TrimSuffix(m.root, "/"))
	if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
		return nil, "", fmt.Errorf("cgroup %s is outside the hierarchy mounted at %s", path, m.dir)
	}
	h := &Hierarchy{Home: filepath.Join(m.dir, rel), V2: m.v2, Controllers: m.ctrls}
	anchor := h.Home
	if m.v2 && filepath.Base(anchor) == ServerLeaf {
		anchor = filepath.Dir(anchor)
	}
	h.Dir = filepath.Join(anchor, name)
	if err := os.Mkdir(h.Dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, "", fmt.Errorf("cgroup %s: %w", h.Dir, err)
	}
	problem := ""
	if m.v2 {
		h.Controllers, problem = enableV2(anchor, h.Dir)
	}
	return h, problem, nil
}

// enableV2 enables the memory and cpu controllers, where the anchor has
// them, for the cgroups under dir. A v2 cgroup that holds processes
// cannot do so (the root excepted): then the tasks' cgroups have none.
func enableV2(anchor, dir string) ([]string, string) {
	avail, _ := os.ReadFile(filepath.Join(anchor, "cgroup.controllers"))
	var want []string
	for _, c := range strings.Fields(string(avail)) {
		if c == "memory" || c == "cpu" || c == "pids" {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return nil, ""
	}
	line := "+" + strings.Join(want, " +")
	for _, d := range []string{anchor, dir} {
		if err := writeCgroupFile(d, "cgroup.subtree_control", line); err != nil {
			return nil, fmt.Sprintf("cgroup v2: cannot enable %s for the tasks under %s (%v): the server's cgroup holds processes; "+
				"under systemd, run it with Delegate=yes and DelegateSubgroup=%s", strings.Join(want, ", "), anchor, err, ServerLeaf)
		}
	}
	return want, ""
}

// writeCgroupFile writes value to the control file name of cgroup dir.
func writeCgroupFile(dir, name, value string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, filepath.Join(dir, name), err)
	}
	return nil
}

// makeTaskCgroup makes the task's cgroup in each hierarchy of
// spec.Cgroups, with its limits and device rules, and returns its
// directories. A cgroup left by an earlier run of the same task is
// killed and removed first.
func makeTaskCgroup(spec Spec) ([]string, error) {
	if spec.Cgroups == nil {
		return nil, nil
	}
	rules, err := deviceRules(spec.DeviceFiles)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, h := range spec.Cgroups.Hierarchies {
		dir, err := h.makeLeaf(spec, rules, spec.Cgroups.Devices)
		if dir != "" {
			dirs = append(dirs, dir)
		}
		if err != nil {
			removeCgroup(dirs, 5*time.Second)
			return nil, err
		}
	}
	return dirs, nil
}

// makeLeaf makes the task's cgroup in h and configures it; it returns
// the directory once made, even when configuring it failed.
func (h Hierarchy) makeLeaf(spec Spec, rules []deviceRule, devices string) (string, error) {
	dir := filepath.Join(h.Dir, spec.ID)
	if _, err := os.Stat(dir); err == nil {
		if err := removeCgroup([]string{dir}, 5*time.Second); err != nil {
			return "", fmt.Errorf("an earlier cgroup of the task: %w", err)
		}
	}
	if err := h.mkdirLeaf(dir); err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	return dir, h.configure(dir, spec, rules, devices)
}

// mkdirLeaf makes the cgroup dir under h.Dir, and h.Dir first when the
// last task's end removed it (again, if that happens in between).
func (h Hierarchy) mkdirLeaf(dir string) error {
	var err error
	for range 10 {
		if err = h.ensureDir(); err == nil {
			if err = os.Mkdir(dir, 0o755); !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return err
}

// ensureDir makes h.Dir, with the v2 controllers enabled for the tasks'
// cgroups under it, unless it exists.
func (h Hierarchy) ensureDir() error {
	if err := os.Mkdir(h.Dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	if h.V2 && len(h.Controllers) > 0 {
		return writeCgroupFile(h.Dir, "cgroup.subtree_control", "+"+strings.Join(h.Controllers, " +"))
	}
	return nil
}

// configure sets the limits and device rules of the task's cgroup dir.
func (h Hierarchy) configure(dir string, spec Spec, rules []deviceRule, devices string) error {
	for _, ctrl := range h.Controllers {
		var err error
		switch ctrl {
		case "memory":
			err = setMemory(dir, h.V2, spec.MemoryBytes)
		case "cpu":
			err = setCPU(dir, h.V2, spec.CPUMilli)
		case "pids":
			err = setPids(dir, spec.PidsMax)
		case "devices":
			if devices == "v1" {
				err = setDevicesV1(dir, rules)
			}
		}
		if err != nil {
			return fmt.Errorf("cgroup %s: %w", dir, err)
		}
	}
	if h.V2 && devices == "bpf" {
		if err := attachDeviceFilter(dir, rules); err != nil {
			return fmt.Errorf("cgroup %s: %w", dir, err)
		}
	}
	return nil
}

// setMemory caps the cgroup's memory, and its swap (none beyond it).
func setMemory(dir string, v2 bool, bytes int64) error {
	if bytes == 0 {
		return nil
	}
	limit := strconv.FormatInt(bytes, 10)
	if v2 {
		if err := writeCgroupFile(dir, "memory.max", limit); err != nil {
			return err
		}
		return writeIfExists(dir, "memory.swap.max", "0")
	}
	if err := writeCgroupFile(dir, "memory.limit_in_bytes", limit); err != nil {
		return err
	}
	return writeIfExists(dir, "memory.memsw.limit_in_bytes", limit)
}

// cpuPeriod is the CFS period of the tasks' CPU quotas, in microseconds.
const cpuPeriod = 100000

// setCPU caps the cgroup's CPU time at milli thousandths of a CPU.
func setCPU(dir string, v2 bool, milli int64) error {
	if milli == 0 {
		return nil
	}
	quota := strconv.FormatInt(max(milli*cpuPeriod/1000, 1000), 10)
	if v2 {
		return writeCgroupFile(dir, "cpu.max", quota+" "+strconv.Itoa(cpuPeriod))
	}
	if err := writeCgroupFile(dir, "cpu.cfs_period_us", strconv.Itoa(cpuPeriod)); err != nil {
		return err
	}
	return writeCgroupFile(dir, "cpu.cfs_quota_us", quota)
}

// setPids caps the number of processes and threads in the cgroup (the
// same file on v1 and v2).
func setPids(dir string, most int64) error {
	if most == 0 {
		return nil
	}
	return writeCgroupFile(dir, "pids.max", strconv.FormatInt(most, 10))
}

// oomKilled reports whether the kernel's OOM killer killed a process of
// the cgroups dirs at their memory limit: oom_kill in memory.events (v2)
// or memory.oom_control (v1, Linux 4.13 and later); where v1 has no such
// count, the limit was hit (memory.failcnt) and a process was killed.
func oomKilled(dirs []string, killed bool) bool {
	for _, d := range dirs {
		for _, name := range []string{"memory.events", "memory.oom_control"} {
			if n, ok := cgroupCount(filepath.Join(d, name), "oom_kill"); ok {
				return n > 0
			}
		}
		if data, err := os.ReadFile(filepath.Join(d, "memory.failcnt")); err == nil {
			n, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
			return n > 0 && killed
		}
	}
	return false
}

// memoryPeakKiB is the most memory the task's cgroup was charged at once
// (KiB): memory.peak on v2, memory.max_usage_in_bytes on v1; 0 when
// neither is there.
func memoryPeakKiB(dirs []string) int64 {
	for _, d := range dirs {
		for _, name := range []string{"memory.peak", "memory.max_usage_in_bytes"} {
			data, err := os.ReadFile(filepath.Join(d, name))
			if err != nil {
				continue
			}
			if n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && n > 0 {
				return n >> 10
			}
		}
	}
	return 0
}

// cgroupCount reads the count key of a flat-keyed cgroup file ("key N"
// lines); false when the file or the key is missing.
func cgroupCount(path, key string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func writeIfExists(dir, name, value string) error {
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		return nil
	}
	return writeCgroupFile(dir, name, value)
}

// joinCgroup moves this process into the cgroups dirs, so that the task
// it starts next begins its life there.
func joinCgroup(dirs []string) error {
	pid := strconv.Itoa(os.Getpid())
	for _, d := range dirs {
		if err := writeCgroupFile(d, "cgroup.procs", pid); err != nil {
			return fmt.Errorf("joining the task's cgroup: %w", err)
		}
	}
	return nil
}

// leaveCgroup moves this process back to the server's cgroups.
func leaveCgroup(c *Cgroups) error {
	pid := strconv.Itoa(os.Getpid())
	for _, h := range c.Hierarchies {
		if err := writeCgroupFile(h.Home, "cgroup.procs", pid); err != nil {
			return fmt.Errorf("leaving the task's cgroup: %w", err)
		}
	}
	return nil
}

// cgroupPIDs lists the processes in the cgroups dirs.
func cgroupPIDs(dirs []string) []int {
	seen := map[int]bool{}
	var out []int
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 && !seen[pid] {
				seen[pid] = true
				out = append(out, pid)
			}
		}
	}
	return out
}

// signalCgroup sends sig to every process in the cgroups dirs.
func signalCgroup(dirs []string, sig syscall.Signal) {
	for _, pid := range cgroupPIDs(dirs) {
		syscall.Kill(pid, sig)
	}
}

// killCgroup sends SIGKILL to every process in the cgroups dirs at once:
// through cgroup.kill on v2; on v1, with the cgroup frozen (when there
// is a freezer) so that no process forks while the others are killed.
func killCgroup(dirs []string) {
	for _, d := range dirs {
		if writeCgroupFile(d, "cgroup.kill", "1") == nil {
			return
		}
	}
	freezer := ""
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "freezer.state")); err == nil {
			freezer = d
		}
	}
	if freezer != "" && freeze(freezer, "FROZEN") {
		defer freeze(freezer, "THAWED")
	}
	signalCgroup(dirs, syscall.SIGKILL)
}

// freeze sets a v1 freezer cgroup's state and waits up to a second for
// it to hold; it reports whether it did.
func freeze(dir, state string) bool {
	if writeCgroupFile(dir, "freezer.state", state) != nil {
		return false
	}
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if got, err := os.ReadFile(filepath.Join(dir, "freezer.state")); err == nil && strings.TrimSpace(string(got)) == state {
			return true
		}
	}
	return false
}

// removeCgroup kills every process in the cgroups dirs and removes them
// once empty, trying for at most limit (a process stuck in the kernel
// cannot be killed), and then their parents if no other task's cgroup is
// left there.
func removeCgroup(dirs []string, limit time.Duration) error {
	defer func(dirs []string) {
		for _, d := range dirs {
			os.Remove(filepath.Dir(d)) // fails while it holds another cgroup
		}
	}(dirs)
	deadline := time.Now().Add(limit)
	for len(dirs) > 0 {
		killCgroup(dirs)
		var left []string
		for _, d := range dirs {
			if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				left = append(left, d)
			}
		}
		dirs = left
		if len(dirs) > 0 && time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s still holds processes %v after %v", dirs[0], cgroupPIDs(dirs), limit)
		}
		if len(dirs) > 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return nil
}

//go:build linux

package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// stopSignal tells a supervisor to read its task's stop request;
// limitSignal, its new time limit.
const (
	stopSignal  = syscall.SIGUSR1
	limitSignal = syscall.SIGUSR2
)

// startSupervisor starts the running binary again as the task's
// supervisor, hands it the launch payload, and returns once the
// supervisor reports that the task runs, or why it does not.
func startSupervisor(spec Spec, payload []byte) (supervisorProc, report, error) {
	reports, reportW, err := os.Pipe()
	if err != nil {
		return nil, report{}, fmt.Errorf("executor: starting task %s: %w", spec.ID, err)
	}
	defer reports.Close()
	// /proc/self/exe is the running binary even when its file has since
	// been replaced or removed.
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"corral-supervisor", spec.ID}
	cmd.Env = append(os.Environ(), superviseEnv+"=1")
	if raceBuild {
		cmd.Env = append(cmd.Env, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	cmd.Stdin = bytes.NewReader(payload)
	cmd.ExtraFiles = []*os.File{reportW} // descriptor 3, reportFD
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	reportW.Close()
	if err != nil {
		return nil, report{}, fmt.Errorf("executor: starting the supervisor of task %s: %w", spec.ID, err)
	}
	var rep report
	if err := json.NewDecoder(reports).Decode(&rep); err != nil || rep.Error != "" {
		cmd.Wait()
		if err != nil {
			return nil, rep, fmt.Errorf("executor: task %s: supervisor exited before the task started: %w", spec.ID, err)
		}
		return nil, rep, &LaunchError{Task: spec.ID, ExitCode: launchExit(rep.Code), Reason: rep.Error}
	}
	return childProc{cmd}, rep, nil
}

// childProc is a supervisor this process started: its own child, which
// os/exec signals and reaps safely.
type childProc struct{ cmd *exec.Cmd }

func (p childProc) send(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }
func (p childProc) wait()                         { p.cmd.Wait() }
func (p childProc) release()                      {}

// findSupervisor returns a handle on the supervisor recorded in st, or an
// error when it no longer runs.
func findSupervisor(st state) (supervisorProc, error) {
	fd, err := unix.PidfdOpen(st.Supervisor, 0)
	if err != nil && !errors.Is(err, unix.ENOSYS) {
		return nil, err
	}
	// Checked after opening the descriptor: if the recorded process is
	// still the one the descriptor refers to, it cannot be swapped later.
	if !st.alive() {
		if err == nil {
			unix.Close(fd)
		}
		return nil, errors.New("supervisor is gone")
	}
	if err != nil { // kernel without pidfd (before Linux 5.3)
		return &pollProc{st: st}, nil
	}
	return &pidfdProc{fd: fd}, nil
}

// pidfdProc is an adopted supervisor followed through a pid file
// descriptor: it becomes readable when the process exits.
type pidfdProc struct {
	mu     sync.Mutex
	fd     int
	closed bool
}

func (p *pidfdProc) send(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("supervisor has exited")
	}
	return unix.PidfdSendSignal(p.fd, sig, nil, 0)
}

func (p *pidfdProc) wait() {
	fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, -1)
		if n > 0 || (err != nil && err != unix.EINTR) {
			return
		}
	}
}

func (p *pidfdProc) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		unix.Close(p.fd)
	}
}

// pollProc is an adopted supervisor on a kernel without pid file
// descriptors: it is checked by pid and start time.
type pollProc struct{ st state }

func (p *pollProc) send(sig syscall.Signal) error {
	if !p.st.alive() {
		return errors.New("supervisor has exited")
	}
	return syscall.Kill(p.st.Supervisor, sig)
}

func (p *pollProc) wait() {
	for p.st.alive() {
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *pollProc) release() {}

// procStart returns the start time of process pid in clock ticks since
// boot, from /proc/<pid>/stat. It fails when there is no such process.
func procStart(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	start, err := parseStatStart(string(data))
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	return start, nil
}

// parseStatStart reads the start time from the text of /proc/<pid>/stat.
// A zombie has exited, so it has no start time worth comparing.
func parseStatStart(stat string) (uint64, error) {
	fields := statFields(stat)
	const startField = 22 - 3
	if len(fields) <= startField {
		return 0, errors.New("too few fields in its stat")
	}
	if fields[0] == "Z" || fields[0] == "X" {
		return 0, errors.New("it has exited")
	}
	return strconv.ParseUint(fields[startField], 10, 64)
}

// alive reports whether the supervisor named in st still runs: a process
// with its pid exists and started at the recorded time.
func (st state) alive() bool {
	start, err := procStart(st.Supervisor)
	return err == nil && start == st.SupervisorStart
}

// killGroup sends SIGKILL to every process of the group pgid and waits,
// up to groupGoneWait, until none of them runs (a zombie has exited and
// holds nothing; its new parent reaps it).
func killGroup(pgid int) {
	signalGroup(pgid, syscall.SIGKILL)
	for deadline := time.Now().Add(groupGoneWait); groupRuns(pgid) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
}

// groupGoneWait bounds how long killGroup waits for a killed group to die.
const groupGoneWait = 10 * time.Second

// groupRuns reports whether a process of group pgid runs: it is in the
// group and is no zombie (/proc/<pid>/stat: the state is field 3, the
// group field 5).
func groupRuns(pgid int) bool {
	if !signalGroup(pgid, 0) {
		return false // no member left at all
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // it ended as we looked
		}
		if state, group, ok := statStateGroup(string(data)); ok && group == pgid && state != "Z" && state != "X" {
			return true
		}
	}
	return false
}

// statFields are the fields of a /proc/<pid>/stat line from the third,
// the state, on. The command name (field 2) is in parentheses and may
// hold spaces or parentheses itself: fields are counted from the last ')'.
func statFields(stat string) []string {
	if i := strings.LastIndexByte(stat, ')'); i >= 0 {
		stat = stat[i+1:]
	}
	return strings.Fields(stat)
}

// statStateGroup reads the state and process group from the text of
// /proc/<pid>/stat.
func statStateGroup(stat string) (state string, pgid int, ok bool) {
	fields := statFields(stat)
	if len(fields) < 3 {
		return "", 0, false
	}
	g, err := strconv.Atoi(fields[2])
	return fields[0], g, err == nil
}

// signalGroup sends sig to every process of the group pgid. It reports
// false when the group no longer exists.
func signalGroup(pgid int, sig syscall.Signal) bool {
	return syscall.Kill(-pgid, sig) == nil
}

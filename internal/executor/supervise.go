//go:build linux

package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reportFD is the descriptor on which the supervisor tells Start that the
// task runs, or why it could not start it.
const reportFD = 3

// init runs the supervisor when the binary was re-executed by Start. It
// is in init so that every program that links this package, test binaries
// included, can supervise without any change to its main.
func init() {
	if os.Getenv(superviseEnv) == "1" {
		os.Exit(supervise(os.Stdin, os.NewFile(reportFD, "report")))
	}
}

// supervisor follows one running task.
type supervisor struct {
	spec     Spec
	cgroup   []string // the task's cgroup, when it has one
	cmd      *exec.Cmd
	pgid     int
	result   Result
	stopping bool
	killAt   time.Time
	kill     *time.Timer
	copies   sync.WaitGroup // the capped logs being copied
	files    []*os.File     // the user's own output files (-o, -e)
}

// supervise is the supervisor's main: start the task, watch it, record how
// it ended. It returns the supervisor's exit code.
func supervise(in io.Reader, out *os.File) int {
	// Installed first: until then SIGUSR1 and SIGUSR2 (a stop request, a
	// new time limit) would kill us.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, stopSignal, limitSignal, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)

	var l launch
	if err := json.NewDecoder(in).Decode(&l); err != nil {
		return sendReport(out, report{Error: fmt.Sprintf("reading the launch: %v", err)})
	}
	s, err := startTask(l)
	if err != nil {
		return sendReport(out, report{Error: err.Error(), Code: launchCode(err)})
	}
	if code := sendReport(out, report{PID: s.pgid, Started: s.result.Started}); code != 0 {
		s.stop(false, 0) // nobody learned of the task: do not leave it running
	}
	s.watch(sigs)
	s.finish()
	if err := writeExit(s.spec, s.result); err != nil {
		return 1
	}
	os.Remove(s.spec.stopPath())
	os.Remove(s.spec.limitPath())
	return 0
}

func sendReport(out *os.File, r report) int {
	err := json.NewEncoder(out).Encode(r)
	out.Close()
	if err != nil || r.Error != "" {
		return 1
	}
	return 0
}

// startTask starts the task in a process group of its own (and its
// cgroup, as its user) and records its state file. The supervisor
// becomes a child subreaper so that processes the task leaves behind are
// re-parented to it and can be reaped.
func startTask(l launch) (*supervisor, error) {
	spec := l.Spec
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("becoming a subreaper: %w", err)
	}
	if err := reserveExitRoom(spec); err != nil {
		return nil, err
	}
	if spec.Umask != nil {
		unix.Umask(int(*spec.Umask)) // the supervisor's own records have modes of their own
	}
	cmd, logs, files, err := taskCommand(l)
	if err != nil {
		return nil, err
	}
	defer closeLogs(cmd)
	if err := startIn(cmd, l); err != nil {
		closeCapped(logs)
		closeFiles(files)
		return nil, err
	}
	s := &supervisor{spec: spec, cgroup: l.Cgroup, cmd: cmd, pgid: cmd.Process.Pid, files: files}
	startCopies(logs, &s.copies)
	s.result.Started = time.Now()
	self, err := procStart(os.Getpid())
	if err == nil {
		err = writeJSON(spec.statePath(), state{Supervisor: os.Getpid(), SupervisorStart: self,
			PID: s.pgid, Started: s.result.Started, Cgroup: l.Cgroup, TakesLimit: true})
	}
	if err != nil {
		s.stop(false, 0)
		s.finish()
		return nil, fmt.Errorf("recording the task's state: %w", err)
	}
	return s, nil
}

// taskCommand prepares the task's process: its program found in the
// task's own PATH, its environment, directory, logs, the user's output
// files and its credentials.
func taskCommand(l launch) (*exec.Cmd, []*cappedLog, []*os.File, error) {
	spec := l.Spec
	if _, err := os.Stat(spec.workDir()); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %w", errNoWorkDir, err)
	}
	path, err := lookPath(spec.Command[0], l.Env)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("starting %w", err)
	}
	cmd := &exec.Cmd{Path: path, Args: spec.Command, Env: l.Env, Dir: spec.workDir()}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if u := spec.User; u.switches() {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: u.Groups}
	}
	if spec.OutputMax > 0 || spec.OutputFile != "" || spec.ErrorFile != "" {
		return cappedCommand(cmd, spec)
	}
	if cmd.Stdout, err = openLog(spec.StdoutPath()); err != nil {
		return nil, nil, nil, err
	}
	if cmd.Stderr, err = openLog(spec.StderrPath()); err != nil {
		closeLogs(cmd)
		return nil, nil, nil, err
	}
	return cmd, nil, nil, nil
}

// cappedCommand gives cmd logs capped at spec.OutputMax bytes each (no
// cap when 0), and the user's output files as their tees.
func cappedCommand(cmd *exec.Cmd, spec Spec) (*exec.Cmd, []*cappedLog, []*os.File, error) {
	userOut, userErr, err := userFiles(spec)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %w", errOutputFile, err)
	}
	var files []*os.File
	for _, f := range []*os.File{userOut, userErr} {
		if f != nil && (len(files) == 0 || files[0] != f) {
			files = append(files, f)
		}
	}
	limit := spec.OutputMax
	if limit <= 0 {
		limit = 1 << 62
	}
	out, lout, err := openCapped(spec.StdoutPath(), limit)
	if err != nil {
		closeFiles(files)
		return nil, nil, nil, err
	}
	errw, lerr, err := openCapped(spec.StderrPath(), limit)
	if err != nil {
		out.Close()
		closeCapped([]*cappedLog{lout})
		closeFiles(files)
		return nil, nil, nil, err
	}
	lout.tee, lerr.tee = userOut, userErr
	cmd.Stdout, cmd.Stderr = out, errw
	return cmd, []*cappedLog{lout, lerr}, files, nil
}

// errOutputFile marks a task whose -o or -e file could not be opened
// as its user.
var errOutputFile = errors.New("output file")

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

func closeLogs(cmd *exec.Cmd) {
	for _, w := range []io.Writer{cmd.Stdout, cmd.Stderr} {
		if f, ok := w.(*os.File); ok {
			f.Close()
		}
	}
}

// startIn starts cmd inside the task's cgroup: the supervisor joins it,
// forks the task there and returns to the server's cgroup, so that the
// task's first instruction already runs under the cgroup's limits.
func startIn(cmd *exec.Cmd, l launch) error {
	if len(l.Cgroup) == 0 {
		return startCmd(cmd, l.Spec)
	}
	if err := joinCgroup(l.Cgroup); err != nil {
		leaveCgroup(l.Spec.Cgroups)
		return err
	}
	err := startCmd(cmd, l.Spec)
	if lerr := leaveCgroup(l.Spec.Cgroups); lerr != nil && err == nil {
		// The supervisor must not die with the task's cgroup.
		cmd.Process.Kill()
		cmd.Wait()
		return lerr
	}
	return err
}

func startCmd(cmd *exec.Cmd, spec Spec) error {
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %q: %w", spec.Command[0], err)
	}
	return nil
}

func openLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the task's log: %w", err)
	}
	return f, nil
}

// watch waits until the task's main process exits, enforcing the time
// limit and serving stop requests meanwhile. The process is not reaped
// yet, so its pid, the group id, cannot be reused while watch signals it.
func (s *supervisor) watch(sigs <-chan os.Signal) {
	exited := make(chan struct{})
	go func() {
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, s.pgid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break
			}
		}
		close(exited)
	}()
	limit, warn := stoppedTimer(), stoppedTimer()
	defer limit.Stop()
	defer warn.Stop()
	s.armLimit(limit, warn)
	s.kill = stoppedTimer()
	for {
		select {
		case <-exited:
			s.result.Ended = time.Now()
			return
		case <-limit.C:
			s.stop(true, s.spec.grace())
		case <-warn.C:
			s.warn()
		case <-s.kill.C:
			s.killAll()
		case sig := <-sigs:
			if sig == limitSignal {
				s.newLimit(limit, warn)
				continue
			}
			s.onSignal(sig)
		}
	}
}

// stoppedTimer is a timer that has not been set.
func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// armLimit sets the time-limit timer, and the warning's before it, from
// the task's start and its time limit (none: both stay unset).
func (s *supervisor) armLimit(limit, warn *time.Timer) {
	limit.Stop()
	warn.Stop()
	if s.spec.TimeLimit <= 0 {
		return
	}
	limit.Reset(s.spec.TimeLimit - time.Since(s.result.Started))
	if s.spec.WarnSignal != "" {
		warn.Reset(s.spec.TimeLimit - s.spec.WarnBefore - time.Since(s.result.Started))
	}
}

// newLimit takes the time limit SetTimeLimit wrote and sets the timers
// anew; a task being stopped keeps its stop.
func (s *supervisor) newLimit(limit, warn *time.Timer) {
	var req limitRequest
	if err := readJSON(s.spec.limitPath(), &req); err != nil || s.stopping {
		return
	}
	s.spec.TimeLimit = req.TimeLimit
	s.armLimit(limit, warn)
}

// onSignal serves a signal sent to the supervisor: SIGUSR1 carries a stop
// request from Stop, SIGTERM (a shutdown of the machine) stops the task
// with its own grace period, and hangups and interrupts are ignored.
func (s *supervisor) onSignal(sig os.Signal) {
	switch sig {
	case stopSignal:
		var req stopRequest
		if err := readJSON(s.spec.stopPath(), &req); err != nil {
			req.Grace = s.spec.grace()
		}
		s.stop(false, req.Grace)
	case syscall.SIGTERM:
		s.stop(false, s.spec.grace())
	}
}

// stop sends SIGTERM to the task's group the first time, and arranges for
// SIGKILL once grace has passed. A later stop with an earlier deadline
// brings the SIGKILL forward; one with a later deadline changes nothing.
func (s *supervisor) stop(timedOut bool, grace time.Duration) {
	if !s.stopping {
		s.stopping = true
		s.result.TimedOut, s.result.Stopped = timedOut, !timedOut
		s.signal(syscall.SIGTERM)
	}
	at := time.Now().Add(grace)
	if s.killAt.IsZero() || at.Before(s.killAt) {
		s.killAt = at
		if s.kill != nil {
			s.kill.Reset(grace)
		} else if grace == 0 {
			s.killAll()
		}
	}
}

// warn sends the task the signal it asked for before its time limit:
// to its main process alone, or to all of them.
func (s *supervisor) warn() {
	sig := unix.SignalNum(s.spec.WarnSignal)
	if sig == 0 || s.stopping {
		return
	}
	if s.spec.WarnMainOnly {
		unix.Kill(s.pgid, sig)
		return
	}
	s.signal(sig)
}

// finish kills what is left of the task's group, reaps the main process
// and every re-parented descendant, and fills in the exit code.
func (s *supervisor) finish() {
	s.killAll()
	err := s.cmd.Wait()
	if s.result.Ended.IsZero() {
		s.result.Ended = time.Now()
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		s.result.ExitCode = 0
	case errors.As(err, &exit):
		ws := exit.Sys().(syscall.WaitStatus)
		s.result.ExitCode = ws.ExitStatus()
		if ws.Signaled() {
			s.result.ExitCode = -1
			s.result.Signal = unix.SignalName(ws.Signal())
		}
	default:
		s.result.ExitCode = -1
		s.result.Error = fmt.Sprintf("waiting for the task: %v", err)
	}
	reapDescendants(30 * time.Second)
	rss, cpu := childrenUsage()
	s.result.MaxRSSKiB, s.result.CPUSeconds = max(rss, memoryPeakKiB(s.cgroup)), cpu
	waitCopies(&s.copies, 10*time.Second)
	closeFiles(s.files)
	s.result.OOMKilled = oomKilled(s.cgroup, s.result.Signal == "SIGKILL")
	if err := removeCgroup(s.cgroup, 30*time.Second); err != nil && s.result.Error == "" {
		s.result.Error = err.Error()
	}
}

// childrenUsage is the largest resident set (KiB) of the supervisor's
// reaped children and the CPU time they used: the task's processes.
func childrenUsage() (int64, float64) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &ru); err != nil {
		return 0, 0
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return ru.Maxrss, cpu.Seconds()
}

// signal sends sig to every process of the task: those in its cgroup,
// which holds even the ones that left its process group, else its group.
func (s *supervisor) signal(sig syscall.Signal) {
	if len(s.cgroup) > 0 {
		signalCgroup(s.cgroup, sig)
		return
	}
	signalGroup(s.pgid, sig)
}

// killAll sends SIGKILL to the task's group and its whole cgroup.
func (s *supervisor) killAll() {
	signalGroup(s.pgid, syscall.SIGKILL)
	if len(s.cgroup) > 0 {
		killCgroup(s.cgroup)
	}
}

// reapDescendants reaps the processes re-parented to the supervisor after
// the task's main process exited, killing any that still run, until none
// is left or limit has passed (a process stuck in the kernel cannot be
// killed; the supervisor does not wait for it forever).
func reapDescendants(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for {
		for {
			pid, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
			if err == unix.ECHILD {
				return
			}
			if err != nil || pid <= 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			return
		}
		for _, pid := range children() {
			unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// children lists the supervisor's child processes from
// /proc/self/task/*/children.
func children() []int {
	files, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(field); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

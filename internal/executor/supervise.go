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
	cmd      *exec.Cmd
	pgid     int
	result   Result
	stopping bool
	killAt   time.Time
	kill     *time.Timer
}

// supervise is the supervisor's main: start the task, watch it, record how
// it ended. It returns the supervisor's exit code.
func supervise(in io.Reader, out *os.File) int {
	// Installed first: until then SIGUSR1 (a stop request) would kill us.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, stopSignal, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)

	var l launch
	if err := json.NewDecoder(in).Decode(&l); err != nil {
		return sendReport(out, report{Error: fmt.Sprintf("reading the launch: %v", err)})
	}
	s, err := startTask(l)
	if err != nil {
		return sendReport(out, report{Error: err.Error()})
	}
	if code := sendReport(out, report{PID: s.pgid, Started: s.result.Started}); code != 0 {
		s.stop(false, 0) // nobody learned of the task: do not leave it running
	}
	s.watch(sigs)
	s.finish()
	if err := writeJSON(s.spec.exitPath(), s.result); err != nil {
		return 1
	}
	os.Remove(s.spec.stopPath())
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

// startTask starts the task in a process group of its own and records its
// state file. The supervisor becomes a child subreaper so that processes
// the task leaves behind are re-parented to it and can be reaped.
func startTask(l launch) (*supervisor, error) {
	spec := l.Spec
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("becoming a subreaper: %w", err)
	}
	stdout, err := openLog(spec.StdoutPath())
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := openLog(spec.StderrPath())
	if err != nil {
		return nil, err
	}
	defer stderr.Close()

	if _, err := os.Stat(spec.workDir()); err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	cmd.Env = l.Env
	cmd.Dir = spec.workDir()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %q: %w", spec.Command[0], err)
	}
	s := &supervisor{spec: spec, cmd: cmd, pgid: cmd.Process.Pid}
	s.result.Started = time.Now()
	self, err := procStart(os.Getpid())
	if err == nil {
		err = writeJSON(spec.statePath(), state{Supervisor: os.Getpid(), SupervisorStart: self,
			PID: s.pgid, Started: s.result.Started})
	}
	if err != nil {
		s.stop(false, 0)
		s.finish()
		return nil, fmt.Errorf("recording the task's state: %w", err)
	}
	return s, nil
}

func openLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
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
	var limit <-chan time.Time
	if s.spec.TimeLimit > 0 {
		t := time.NewTimer(s.spec.TimeLimit - time.Since(s.result.Started))
		defer t.Stop()
		limit = t.C
	}
	s.kill = time.NewTimer(time.Hour)
	s.kill.Stop()
	for {
		select {
		case <-exited:
			s.result.Ended = time.Now()
			return
		case <-limit:
			s.stop(true, s.spec.grace())
		case <-s.kill.C:
			signalGroup(s.pgid, syscall.SIGKILL)
		case sig := <-sigs:
			s.onSignal(sig)
		}
	}
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
		signalGroup(s.pgid, syscall.SIGTERM)
	}
	at := time.Now().Add(grace)
	if s.killAt.IsZero() || at.Before(s.killAt) {
		s.killAt = at
		if s.kill != nil {
			s.kill.Reset(grace)
		} else if grace == 0 {
			signalGroup(s.pgid, syscall.SIGKILL)
		}
	}
}

// finish kills what is left of the task's group, reaps the main process
// and every re-parented descendant, and fills in the exit code.
func (s *supervisor) finish() {
	signalGroup(s.pgid, syscall.SIGKILL)
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

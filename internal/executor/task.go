package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// Task is a running or ended task. Its methods are safe for concurrent use.
type Task struct {
	spec   Spec
	pid    int
	cgroup []string // the task's cgroup, when it has one
	sup    supervisorProc
	done   chan struct{}
	// takesLimit: its supervisor takes SetTimeLimit (one this corral
	// started, or an adopted one that recorded so).
	takesLimit bool

	mu     sync.Mutex
	result Result
}

// Start starts the task's supervisor, which starts the task, and returns
// once the task runs. An error means the task did not start: its command
// was not found, its directory could not be written, and so on.
func Start(spec Spec) (*Task, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if err := refuseRunning(spec); err != nil {
		return nil, err
	}
	if err := prepareDir(spec); err != nil {
		return nil, err
	}
	cgroup, err := makeTaskCgroup(spec)
	if err != nil {
		return nil, fmt.Errorf("executor: task %s: %w", spec.ID, err)
	}
	sup, rep, err := launchTask(spec, cgroup)
	if err != nil {
		removeCgroup(cgroup, 5*time.Second)
		return nil, err
	}
	t := newTask(spec, rep.PID, sup)
	t.cgroup, t.takesLimit = cgroup, true
	go t.follow()
	return t, nil
}

// launchTask hands the task to a new supervisor.
func launchTask(spec Spec, cgroup []string) (supervisorProc, report, error) {
	payload, err := json.Marshal(launch{Spec: spec, Env: taskEnv(spec), Cgroup: cgroup})
	if err != nil {
		return nil, report{}, fmt.Errorf("executor: encoding task %s: %w", spec.ID, err)
	}
	return startSupervisor(spec, payload)
}

// refuseRunning fails when a task with the same id and state directory
// still runs: starting another would mix up their records.
func refuseRunning(spec Spec) error {
	var st state
	if readJSON(spec.statePath(), &st) != nil {
		return nil
	}
	if sup, err := findSupervisor(st); err == nil {
		sup.release()
		return fmt.Errorf("executor: task %s already runs as pid %d in %s", spec.ID, st.PID, spec.Dir)
	}
	return nil
}

// prepareDir creates the state directory and removes the records of an
// earlier run under the same id.
func prepareDir(spec Spec) error {
	if err := os.MkdirAll(spec.Dir, 0o700); err != nil {
		return fmt.Errorf("executor: task %s: %w", spec.ID, err)
	}
	for _, p := range []string{spec.exitPath(), spec.stopPath(), spec.limitPath(), spec.statePath()} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("executor: task %s: removing an old record: %w", spec.ID, err)
		}
	}
	return nil
}

// Adopt re-attaches to a task started by an earlier server process, whose
// supervisor outlived it. pid is the task's pid as PID reported it (0
// accepts whatever the task's state file records). If the task already
// ended, the Task is Done at once with the Result from its exit record.
// Adopt returns ErrLost if neither a live supervisor nor an exit record
// exists, and ErrNeverStarted as well when no supervisor ever recorded
// the task as started (no state file).
func Adopt(spec Spec, pid int) (*Task, error) {
	if err := spec.validateFiles(); err != nil {
		return nil, err
	}
	if t, err := adoptEnded(spec, pid); t != nil || err != nil {
		return t, err
	}
	var st state
	if err := readJSON(spec.statePath(), &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %w: task %s has neither a state file nor an exit record in %s", ErrLost, ErrNeverStarted, spec.ID, spec.Dir)
		}
		return nil, fmt.Errorf("executor: adopting task %s: %w", spec.ID, err)
	}
	if pid != 0 && st.PID != pid {
		return nil, fmt.Errorf("%w: task %s in %s ran as pid %d, not %d", ErrLost, spec.ID, spec.Dir, st.PID, pid)
	}
	sup, err := findSupervisor(st)
	if err != nil {
		// It may have written the exit record since we looked.
		if t, err := adoptEnded(spec, pid); t != nil || err != nil {
			return t, err
		}
		// What is left of the task is in its cgroup, which is its
		// alone: unlike its process group id, it cannot name
		// another's processes, however long ago the supervisor died.
		err := removeCgroup(st.Cgroup, 10*time.Second)
		return nil, errors.Join(fmt.Errorf("%w: task %s: supervisor %d is gone and left no exit record", ErrLost, spec.ID, st.Supervisor), err)
	}
	t := newTask(spec, st.PID, sup)
	t.cgroup, t.takesLimit = st.Cgroup, st.TakesLimit
	go t.follow()
	return t, nil
}

// adoptEnded returns a finished Task when the task has an exit record.
func adoptEnded(spec Spec, pid int) (*Task, error) {
	res, ok, err := readExit(spec)
	if err != nil {
		return nil, fmt.Errorf("executor: adopting task %s: %w", spec.ID, err)
	}
	if !ok {
		return nil, nil
	}
	var st state
	if readJSON(spec.statePath(), &st) == nil {
		pid = st.PID
	}
	t := newTask(spec, pid, nil)
	t.finish(res)
	return t, nil
}

// supervisorProc is a handle on a task's supervisor that never signals an
// unrelated process which reused the supervisor's pid.
type supervisorProc interface {
	send(syscall.Signal) error // tells the supervisor a request awaits it (stopSignal, limitSignal)
	wait()                     // returns once the supervisor has exited
	release()                  // after wait: frees the handle
}

func newTask(spec Spec, pid int, sup supervisorProc) *Task {
	return &Task{spec: spec, pid: pid, sup: sup, done: make(chan struct{})}
}

// follow waits for the supervisor to exit and takes the task's Result from
// its exit record; without one, the task is lost.
func (t *Task) follow() {
	t.sup.wait()
	res, ok, err := readExit(t.spec)
	if !ok {
		// The supervisor was killed: what is left of the task has nobody
		// to stop it. Its group id is still reserved while any member
		// lives, and this runs as soon as the supervisor is gone; its
		// cgroup holds even the processes that left the group. The task
		// is Done once they are all gone.
		killGroup(t.pid)
		res = Result{ExitCode: -1, Lost: true, Ended: time.Now()}
		err = errors.Join(err, removeCgroup(t.cgroup, 10*time.Second))
		if err != nil {
			res.Error = err.Error()
		}
	}
	t.sup.release()
	t.finish(res)
}

func (t *Task) finish(res Result) {
	t.mu.Lock()
	t.result = res
	t.mu.Unlock()
	close(t.done)
}

// PID is the task's process id, which is also its process group id.
func (t *Task) PID() int { return t.pid }

// Done is closed when the task has ended and its Result is final. The
// task has ended when its main process exited and every process it left
// behind was killed and reaped.
func (t *Task) Done() <-chan struct{} { return t.done }

// Result is how the task ended; it is valid after Done (before, it is the
// zero Result).
func (t *Task) Result() Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.result
}

// StdoutPath is the file that holds the task's standard output.
func (t *Task) StdoutPath() string { return t.spec.StdoutPath() }

// StderrPath is the file that holds the task's standard error.
func (t *Task) StderrPath() string { return t.spec.StderrPath() }

// Stop asks the supervisor to send SIGTERM to the task's whole process
// group now and SIGKILL after grace if it still runs (grace 0: at once).
// It returns without waiting; Done tells when the task has ended, with
// Result().Stopped set. Stopping again changes nothing, except that a
// shorter grace brings the SIGKILL forward. Stopping an ended task does
// nothing.
func (t *Task) Stop(grace time.Duration) {
	select {
	case <-t.done:
		return
	default:
	}
	// Without the request file the supervisor falls back to Spec.Grace.
	writeJSON(t.spec.stopPath(), stopRequest{Grace: max(grace, 0)})
	t.sup.send(stopSignal)
}

// ErrNoLimitChange: the task's supervisor was started by a corral that
// could not change a running task's time limit.
var ErrNoLimitChange = errors.New("its supervisor predates time-limit changes")

// TakesTimeLimit reports whether SetTimeLimit can change the task's
// limit: false for a task adopted from a supervisor of an older corral.
func (t *Task) TakesTimeLimit() bool { return t.takesLimit }

// SetTimeLimit changes the running task's time limit, counted from its
// start as Spec.TimeLimit is (0: none). A limit already passed stops it
// at once, with its grace period, as a time-out. It returns once the
// request is handed over; an ended task is left as it is.
func (t *Task) SetTimeLimit(limit time.Duration) error {
	select {
	case <-t.done:
		return nil
	default:
	}
	if limit < 0 {
		return fmt.Errorf("executor: task %s: time limit %v is negative", t.spec.ID, limit)
	}
	if !t.takesLimit {
		return fmt.Errorf("executor: task %s: %w", t.spec.ID, ErrNoLimitChange)
	}
	if err := writeJSON(t.spec.limitPath(), limitRequest{TimeLimit: limit}); err != nil {
		return fmt.Errorf("executor: task %s: %w", t.spec.ID, err)
	}
	if err := t.sup.send(limitSignal); err != nil {
		return fmt.Errorf("executor: task %s: telling its supervisor: %w", t.spec.ID, err)
	}
	return nil
}

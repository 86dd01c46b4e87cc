package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// state is what the supervisor writes once the task runs: enough for a
// later server to find the supervisor again and to tell it from an
// unrelated process that reused its pid.
type state struct {
	Supervisor      int       // the supervisor's pid
	SupervisorStart uint64    // its start time in clock ticks since boot (/proc/<pid>/stat field 22)
	PID             int       // the task's pid, also its process group id
	Started         time.Time // when the task started
	// Cgroup is the task's cgroup, a directory in each hierarchy: what
	// is killed when the supervisor is lost.
	Cgroup []string `json:",omitempty"`
	// TakesLimit: the supervisor changes the time limit on limitSignal.
	// A supervisor of an older corral did not record it, and limitSignal
	// would kill it.
	TakesLimit bool `json:",omitempty"`
}

// superviseEnv, set to "1", turns the process into a task's supervisor.
// Start sets it when it re-executes the running binary; it is never passed
// on to the task.
const superviseEnv = "CORRAL_EXECUTOR_SUPERVISE"

// launch is what Start hands the supervisor on its standard input.
type launch struct {
	Spec   Spec
	Env    []string // the task's whole environment
	Cgroup []string `json:",omitempty"` // the task's cgroup, made by Start
}

// report is the supervisor's answer to Start: the task runs, or why not.
type report struct {
	PID     int
	Started time.Time
	Error   string `json:",omitempty"`
	// Code is the exit code that says why the task did not start (see
	// LaunchError), with Error.
	Code int `json:",omitempty"`
}

// stopRequest is a pending stop: the supervisor sends SIGTERM at once and
// SIGKILL after Grace.
type stopRequest struct {
	Grace time.Duration
}

// limitRequest is a new time limit for the running task, counted from
// its start (0: none).
type limitRequest struct {
	TimeLimit time.Duration
}

// writeJSON writes v to path atomically: a temporary file in the same
// directory, synced, then renamed over path.
func writeJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// readJSON reads path into v. A missing file gives an error that matches
// fs.ErrNotExist.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

// readExit reads a task's exit record; ok is false when there is none.
func readExit(s Spec) (res Result, ok bool, err error) {
	err = readJSON(s.exitPath(), &res)
	if errors.Is(err, fs.ErrNotExist) {
		return Result{}, false, nil
	}
	return res, err == nil, err
}

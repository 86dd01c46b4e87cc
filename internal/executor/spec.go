package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultGrace is the SIGTERM to SIGKILL delay at the time limit when
// Spec.Grace is zero.
const DefaultGrace = 10 * time.Second

// Spec is one task to run as a real process in its own process group
// (Setpgid), so that it outlives the server that started it.
type Spec struct {
	ID      string   // unique and file-name safe, e.g. "j000017-0"; names the files under Dir
	Command []string // argv; Command[0] is looked up in PATH
	WorkDir string   // working directory of the process ("" = Dir)
	// Env is the task's KEY=VALUE variables, after a default PATH and
	// before HOME, USER and LOGNAME of User (see taskEnv): nothing of
	// the server's own environment reaches the task.
	Env []string
	// User is the Unix account the task runs as; nil means the server's.
	User *User `json:",omitempty"`
	// Devices are GPU indices ("0", "3"), GPU UUIDs or MIG UUIDs. They
	// set CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES (comma-joined)
	// and CUDA_DEVICE_ORDER=PCI_BUS_ID, so that indices mean what NVML
	// and nvidia-smi mean by them; nil or empty means no GPU:
	// CUDA_VISIBLE_DEVICES="" and NVIDIA_VISIBLE_DEVICES=void.
	Devices []string
	// WorldSize > 0 marks one rank of a gang and sets WORLD_SIZE, RANK,
	// LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT, the
	// variables torchrun sets for its workers.
	WorldSize  int
	Rank       int
	LocalRank  int
	MasterAddr string
	MasterPort int
	// LocalWorldSize is the number of the gang's ranks on this machine
	// (LOCAL_WORLD_SIZE); 0 means all of them, WorldSize.
	LocalWorldSize int
	Dir            string        // state directory: stdout/stderr logs and the exit record live here
	TimeLimit      time.Duration // 0 = none; at the limit the task is stopped with Grace
	Grace          time.Duration // SIGTERM -> SIGKILL delay when stopped for the time limit (default 10s)

	// Cgroups, when set, puts the task in a cgroup of its own (named
	// ID under each of its hierarchies): the whole cgroup is killed when
	// the task ends, is stopped, or loses its supervisor, and the limits
	// below are the kernel's.
	Cgroups *Cgroups `json:",omitempty"`
	// CPUMilli caps the task's CPU time in thousandths of a CPU (a CFS
	// quota); MemoryBytes caps its memory (and swap). 0: no cap.
	CPUMilli    int64 `json:",omitempty"`
	MemoryBytes int64 `json:",omitempty"`
	// PidsMax caps the processes and threads the task may have at once
	// (pids.max); 0: no cap.
	PidsMax int64 `json:",omitempty"`
	// OutputMax caps each of the task's logs (stdout, stderr) in bytes:
	// the supervisor copies the task's output through a pipe, and ends a
	// log at the cap with TruncatedMarker. 0: no cap (the task writes
	// its logs itself).
	OutputMax int64 `json:",omitempty"`
	// DeviceFiles are the device files, beyond the harmless ones
	// (/dev/null, /dev/zero, ttys...), that a task in a cgroup may open,
	// such as its GPUs' /dev/nvidiaN and the driver's /dev/nvidiactl;
	// any other device is refused with EPERM. Files that do not exist
	// are skipped.
	DeviceFiles []string `json:",omitempty"`

	// OutputFile and ErrorFile, when set, receive a copy of the task's
	// standard output and error beside its logs (sbatch's -o and -e):
	// the supervisor opens them with the task's user's credentials, so
	// that they are created as that user and only where it may write,
	// truncated unless OutputAppend, and not capped by OutputMax. The
	// same path for both shares one file.
	OutputFile   string `json:",omitempty"`
	ErrorFile    string `json:",omitempty"`
	OutputAppend bool   `json:",omitempty"`
	// Umask is the task's file mode creation mask (nil: the server's).
	Umask *uint32 `json:",omitempty"`
	// WarnSignal (SIGUSR1, ...) is sent WarnBefore the time limit, to
	// every process of the task, or to its main process alone when
	// WarnMainOnly (sbatch's --signal).
	WarnSignal   string        `json:",omitempty"`
	WarnBefore   time.Duration `json:",omitempty"`
	WarnMainOnly bool          `json:",omitempty"`
}

// Result is how a task ended.
type Result struct {
	ExitCode int       // -1 when killed by a signal or when the code is unknown
	Signal   string    // "SIGTERM", "SIGKILL", ... or ""
	TimedOut bool      // stopped by its time limit
	Stopped  bool      // stopped by Stop (preemption, cancel)
	Started  time.Time // when the task's process started
	Ended    time.Time // when its main process exited
	// Lost is set when the supervisor vanished without writing an exit
	// record (it was killed itself): the exit code is unknown.
	Lost bool `json:",omitempty"`
	// OOMKilled is set when the kernel's OOM killer killed a process of
	// the task's cgroup at its memory limit.
	OOMKilled bool `json:",omitempty"`
	// Error describes a failure of the supervisor after the task started,
	// such as an exit record it could not write in full.
	Error string `json:",omitempty"`
	// MaxRSSKiB is the task's peak memory: in a memory cgroup, the most
	// its processes together were charged at once (resident memory and
	// page cache, what its memory limit is enforced on; memory.peak or
	// memory.max_usage_in_bytes), else the largest resident set of any of
	// its processes. CPUSeconds is the CPU time (user and system) they all
	// used, as the kernel counted them for the supervisor's reaped
	// children (getrusage RUSAGE_CHILDREN); zero when unknown.
	MaxRSSKiB  int64   `json:",omitempty"`
	CPUSeconds float64 `json:",omitempty"`
}

// ErrLost is returned by Adopt when neither the task's supervisor nor an
// exit record exists: the task is gone and how it ended is unknown.
var ErrLost = errors.New("executor: task lost")

// ErrNeverStarted is returned by Adopt, with ErrLost, when the task
// left no trace in its directory: no supervisor ever started it.
var ErrNeverStarted = errors.New("executor: task never started")

// validate reports what is wrong with a spec to start, if anything.
func (s Spec) validate() error {
	if err := s.validateFiles(); err != nil {
		return err
	}
	if len(s.Command) == 0 || s.Command[0] == "" {
		return fmt.Errorf("executor: task %s has no command", s.ID)
	}
	if s.WorldSize < 0 || (s.WorldSize > 0 && (s.Rank < 0 || s.Rank >= s.WorldSize)) {
		return fmt.Errorf("executor: task %s has rank %d of world size %d", s.ID, s.Rank, s.WorldSize)
	}
	if s.TimeLimit < 0 || s.Grace < 0 {
		return fmt.Errorf("executor: task %s has a negative time limit or grace period", s.ID)
	}
	if s.CPUMilli < 0 || s.MemoryBytes < 0 || s.PidsMax < 0 {
		return fmt.Errorf("executor: task %s has a negative CPU or memory limit", s.ID)
	}
	if err := s.User.validate(); err != nil {
		return fmt.Errorf("executor: task %s: %w", s.ID, err)
	}
	return nil
}

// validateFiles checks what names the task's files, all Adopt needs.
func (s Spec) validateFiles() error {
	if s.ID == "" || s.ID == "." || s.ID == ".." || strings.ContainsAny(s.ID, "/\x00") {
		return fmt.Errorf("executor: task id %q is not a file name", s.ID)
	}
	if s.Dir == "" {
		return fmt.Errorf("executor: task %s has no state directory", s.ID)
	}
	return nil
}

func (s Spec) grace() time.Duration {
	if s.Grace == 0 {
		return DefaultGrace
	}
	return s.Grace
}

func (s Spec) workDir() string {
	if s.WorkDir == "" {
		return s.Dir
	}
	return s.WorkDir
}

func (s Spec) path(suffix string) string { return filepath.Join(s.Dir, s.ID+suffix) }

// StdoutPath is where the task's standard output goes.
func (s Spec) StdoutPath() string { return s.path(".out") }

// StderrPath is where the task's standard error goes.
func (s Spec) StderrPath() string { return s.path(".err") }

func (s Spec) statePath() string { return s.path(".state") }
func (s Spec) stopPath() string  { return s.path(".stop") }
func (s Spec) limitPath() string { return s.path(".limit") }
func (s Spec) exitPath() string  { return s.path(".exit") }

// taskEnv is the task's environment: a default PATH, then Spec.Env, then
// HOME, USER and LOGNAME of the task's user (accountEnv) and the device
// and gang variables, so that the account and the scheduler's choice of
// GPUs and ranks win over anything the submitter sent. When a key
// repeats, the process sees the last value. The server's own environment
// is no part of it.
func taskEnv(s Spec) []string {
	env := []string{"PATH=" + DefaultPath}
	for _, kv := range s.Env {
		if !strings.HasPrefix(kv, superviseEnv+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, accountEnv(s.User)...)
	if len(s.Devices) == 0 {
		env = append(env, "CUDA_VISIBLE_DEVICES=", "NVIDIA_VISIBLE_DEVICES=void")
	} else {
		// Indices are NVML's (nvidia-smi's) PCI bus order; without
		// CUDA_DEVICE_ORDER, CUDA numbers the fastest GPU first.
		devices := strings.Join(s.Devices, ",")
		env = append(env, "CUDA_VISIBLE_DEVICES="+devices, "NVIDIA_VISIBLE_DEVICES="+devices,
			"CUDA_DEVICE_ORDER=PCI_BUS_ID")
	}
	if s.WorldSize > 0 {
		env = append(env,
			"WORLD_SIZE="+strconv.Itoa(s.WorldSize),
			"RANK="+strconv.Itoa(s.Rank),
			"LOCAL_RANK="+strconv.Itoa(s.LocalRank),
			"LOCAL_WORLD_SIZE="+strconv.Itoa(localWorldSize(s)),
			"MASTER_ADDR="+s.MasterAddr,
			"MASTER_PORT="+strconv.Itoa(s.MasterPort),
		)
	}
	return env
}

func localWorldSize(s Spec) int {
	if s.LocalWorldSize == 0 {
		return s.WorldSize
	}
	return s.LocalWorldSize
}

// LaunchError is Start's error when the task's process did not start.
// ExitCode is what a shell would report: 127 when the command is not
// found, 126 when it is found but cannot be executed, and -1 for any
// other reason (such as a missing working directory): never 0.
type LaunchError struct {
	Task     string
	ExitCode int
	Reason   string
}

func (e *LaunchError) Error() string { return fmt.Sprintf("executor: task %s: %s", e.Task, e.Reason) }

// Exit codes of a task that did not start, as a shell reports them.
const (
	ExitNotFound      = 127
	ExitNotExecutable = 126
	ExitNotStarted    = -1 // neither: no working directory, no log file, ...
)

var errNoWorkDir = errors.New("no working directory")

// launchCode is the exit code that says why startTask failed.
func launchCode(err error) int {
	switch {
	case errors.Is(err, errNotInPath):
		return ExitNotFound
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Op != "fork/exec" {
		return ExitNotStarted
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ExitNotFound // an explicit path to nothing
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC):
		return ExitNotExecutable
	}
	return ExitNotStarted
}

// launchExit is the exit code a supervisor reported, ExitNotStarted when
// it reported none (an older supervisor, or a failure before the task).
func launchExit(code int) int {
	if code == 0 {
		return ExitNotStarted
	}
	return code
}

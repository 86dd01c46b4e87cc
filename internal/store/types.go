package store

import (
	"fmt"
	"time"

	"github.com/corral-sched/corral/internal/eligible"
)

// State is where a job is in its life.
type State string

// Job states. Pending and Preempted jobs wait for GPUs; Running jobs hold
// them; the others are final.
const (
	Pending   State = "pending"
	Running   State = "running"
	Succeeded State = "succeeded"
	Failed    State = "failed"
	Cancelled State = "cancelled"
	Preempted State = "preempted" // stopped for higher-priority work; waits to run again
)

// States lists every state in display order.
var States = []State{Pending, Preempted, Running, Succeeded, Failed, Cancelled}

// Final reports whether a job in state s will not run again.
func (s State) Final() bool { return s == Succeeded || s == Failed || s == Cancelled }

// Waiting reports whether a job in state s waits for GPUs.
func (s State) Waiting() bool { return s == Pending || s == Preempted }

// How an attempt ended, named as Slurm's sacct names it: Job.Outcome and
// Record.Outcome, beside the State that the API's clients filter on (a
// job that reached its time limit is Failed with Outcome TIMEOUT).
const (
	OutcomeCompleted = "COMPLETED"
	OutcomeFailed    = "FAILED" // a non-zero exit, a signal, or a task that never started
	OutcomeCancelled = "CANCELLED"
	OutcomeTimeout   = "TIMEOUT"
	OutcomePreempted = "PREEMPTED"
	OutcomeNodeFail  = "NODE_FAIL" // its supervisor was lost or its GPU failed
	// OutcomeOutOfMemory: the kernel's OOM killer killed a process of
	// a task at its cgroup's memory limit.
	OutcomeOutOfMemory = "OUT_OF_MEMORY"
	// OutcomeRequeued: its user requeued it while it ran (corral requeue).
	OutcomeRequeued = "REQUEUED"
)

// SlurmState is the state squeue or sacct would show for a job in state
// s whose latest attempt ended as outcome ("" before any ended, or in a
// record written before outcomes were kept).
func SlurmState(s State, outcome string) string {
	switch s {
	case Pending:
		return "PENDING"
	case Running:
		return "RUNNING"
	}
	if outcome != "" {
		return outcome
	}
	switch s {
	case Succeeded:
		return OutcomeCompleted
	case Cancelled:
		return OutcomeCancelled
	case Preempted:
		return OutcomePreempted
	}
	return OutcomeFailed
}

// StopCancel is Job.Stopping for a cancelled job; StopRequeue for a job
// its user requeued while it ran.
const (
	StopCancel  = "cancelled"
	StopRequeue = "requeued by its user"
)

// Spec is what a tenant asks to run: Tasks identical tasks (a gang when
// more than one), each with the same GPU demand.
type Spec struct {
	Name            string        `json:"name,omitempty"`
	Command         []string      `json:"command"`
	WorkDir         string        `json:"workdir,omitempty"`
	Env             []string      `json:"env,omitempty"`
	GPUs            int           `json:"gpus,omitempty"`      // whole GPUs per task
	MIG             string        `json:"mig,omitempty"`       // a MIG profile per task, e.g. "1g.10gb"
	GPUMilli        int           `json:"gpu_milli,omitempty"` // a shared fraction of one GPU per task, 1..999
	CPUMilli        int64         `json:"cpu_milli,omitempty"`
	MemoryMiB       int64         `json:"memory_mib,omitempty"`
	Tasks           int           `json:"tasks"`
	TimeLimit       time.Duration `json:"time_limit,omitempty"`
	Priority        int           `json:"priority,omitempty"`
	Queue           string        `json:"queue,omitempty"`
	CheckpointEvery time.Duration `json:"checkpoint_every,omitempty"`
	Grace           time.Duration `json:"grace,omitempty"`
	// Requeue puts the job back in the queue when it is lost (its
	// process vanished across a server restart) or its GPU fails.
	Requeue bool `json:"requeue,omitempty"`
	// Image: run the command in a container of this image.
	Image string `json:"image,omitempty"`
	// Adjusted says, in words, what the server set or lowered in the
	// request at submit to keep it within the admin's limits (a grace
	// above the cap, a memory or CPU limit the job did not ask for).
	Adjusted []string `json:"adjusted,omitempty"`
	// TasksGiven: the request named its tasks (sbatch's -n), so the job
	// gets SLURM_NTASKS as under sbatch.
	TasksGiven bool `json:"tasks_given,omitempty"`
	// GPUMemoryMiB, GPUMemoryPerGPUMiB and GPUModels are an ask by GPU
	// memory (job.MemoryAsk); ChosenModel is the model the scheduler
	// chose for it at submit, GPUs and Tasks the count.
	GPUMemoryMiB       int64    `json:"gpu_memory_mib,omitempty"`
	GPUMemoryPerGPUMiB int64    `json:"gpu_memory_per_gpu_mib,omitempty"`
	GPUModels          []string `json:"gpu_models,omitempty"`
	ChosenModel        string   `json:"chosen_model,omitempty"`

	// The fields below came with batch scripts, arrays, dependencies
	// and holds; a record written before them has them zero.

	// Script is the body of a batch script; Command[0] is its name and
	// the rest its arguments. The server writes it into the attempt's
	// directory and runs that copy, as sbatch runs its copy.
	Script string `json:"script,omitempty"`
	// Dependency is what must happen to other jobs before this one may
	// start, with their IDs resolved; KillOnInvalidDep cancels it when
	// that can never be.
	Dependency       eligible.Dependency `json:"dependency,omitzero"`
	KillOnInvalidDep bool                `json:"kill_on_invalid_dep,omitempty"`
	// Begin: the job starts no earlier (sbatch's --begin).
	Begin time.Time `json:"begin,omitzero"`
	// Output and Error are the file name patterns of sbatch's -o and -e
	// (relative to the work directory); Append opens them without
	// truncating (--open-mode=append).
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
	Append bool   `json:"append,omitempty"`
	// Umask is the submitter's file mode creation mask, which the tasks
	// get (nil: the server's).
	Umask *uint32 `json:"umask,omitempty"`
	// SubmitDir is where the job was submitted from (SLURM_SUBMIT_DIR).
	SubmitDir string `json:"submit_dir,omitempty"`
	// Signal is sent to the tasks SignalBefore their time limit
	// (sbatch's --signal=SIG@TIME), to their main processes alone when
	// SignalMainOnly (B:).
	Signal         string        `json:"signal,omitempty"`
	SignalBefore   time.Duration `json:"signal_before,omitempty"`
	SignalMainOnly bool          `json:"signal_main_only,omitempty"`
}

// Array is what every task of a job array knows of the whole, for the
// variables sbatch sets (SLURM_ARRAY_TASK_COUNT and the like).
type Array struct {
	Count int `json:"count"`
	Min   int `json:"min"`
	Max   int `json:"max"`
	Step  int `json:"step"`
	// Limit is the most of its tasks that run at once (0: no limit).
	Limit int `json:"limit,omitempty"`
}

// GPUsPerTask is the number of GPUs (whole, or the one a slice lives on)
// each task uses; 0 for a CPU-only task.
func (s Spec) GPUsPerTask() int {
	if s.GPUs > 0 {
		return s.GPUs
	}
	if s.MIG != "" || s.GPUMilli > 0 {
		return 1
	}
	return 0
}

// Task is one running or finished task of a job.
type Task struct {
	Rank     int      `json:"rank"`
	GPUs     []int    `json:"gpus,omitempty"`      // physical GPU indices
	Devices  []string `json:"devices,omitempty"`   // what CUDA_VISIBLE_DEVICES gets
	MIG      string   `json:"mig,omitempty"`       // MIG profile, when a slice
	MIGStart int      `json:"mig_start,omitempty"` // first memory slice of the instance
	Milli    int      `json:"milli,omitempty"`     // shared fraction, thousandths
	PID      int      `json:"pid,omitempty"`
	ExitCode *int     `json:"exit_code,omitempty"`
	Signal   string   `json:"signal,omitempty"`
}

// Job is a submitted job and everything the server knows about it.
type Job struct {
	ID     uint64 `json:"id"`
	Tenant string `json:"tenant"`
	Spec   Spec   `json:"spec"`
	State  State  `json:"state"`
	Reason string `json:"reason,omitempty"` // why it ended, or why it waits again
	// Stopping is set while the server stops a running job: why
	// (StopCancel, or a preemption or drain reason).
	Stopping string `json:"stopping,omitempty"`
	GPUModel string `json:"gpu_model,omitempty"`
	Tasks    []Task `json:"tasks,omitempty"` // set while running and after
	Port     int    `json:"master_port,omitempty"`
	Attempts int    `json:"attempts,omitempty"` // times started
	// Preemptions is how often it was stopped for other work; the core
	// stops none more than its bound. NoBorrowUntil: after it was stopped
	// to give lent quota back, it runs only within its tenant's own quota
	// until then. Claimed: running work was stopped for it, so the room
	// freed is its own until it starts. The three are the scheduler's
	// memory of the job (sched.Remembered), persisted here.
	Preemptions   int       `json:"preemptions,omitempty"`
	NoBorrowUntil time.Time `json:"no_borrow_until,omitzero"`
	Claimed       bool      `json:"claimed,omitempty"`
	Submitted     time.Time `json:"submitted"`
	Started       time.Time `json:"started,omitzero"`
	Ended         time.Time `json:"ended,omitzero"`
	ExitCode      *int      `json:"exit_code,omitempty"` // the job's: the failing rank's exit code, else 0
	// Outcome is how the latest attempt ended (an Outcome* name), kept
	// while a requeued job waits again.
	Outcome string `json:"outcome,omitempty"`
	// Held: its user holds it back (submitted with --hold, or corral
	// hold); it waits until released.
	Held bool `json:"held,omitempty"`
	// ArrayJob is the job ID of the array this job is a task of (the ID
	// of its first task), 0 for a job of its own; ArrayIndex is its
	// index in the array.
	ArrayJob   uint64 `json:"array_job,omitempty"`
	ArrayIndex int    `json:"array_index,omitempty"`
	Array      *Array `json:"array,omitempty"`
}

// ArrayName is the job's name as squeue shows an array task
// (j000017_3), or its Name when it is not one.
func (j *Job) ArrayName() string {
	if j.ArrayJob == 0 {
		return j.Name()
	}
	return fmt.Sprintf("%s_%d", FormatID(j.ArrayJob), j.ArrayIndex)
}

// Name is the job's display ID, for example "j000017".
func (j *Job) Name() string { return FormatID(j.ID) }

// FormatID formats a job ID as the API and the CLI show it.
func FormatID(id uint64) string { return fmt.Sprintf("j%06d", id) }

// ParseID parses "j000017" or "17".
func ParseID(s string) (uint64, error) {
	if len(s) > 0 && s[0] == 'j' {
		s = s[1:]
	}
	var id uint64
	if s == "" || len(s) > 19 {
		return 0, fmt.Errorf("job id %q: want j000017 or 17", s)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("job id %q: want j000017 or 17", s)
		}
		id = id*10 + uint64(c-'0')
	}
	if id == 0 {
		return 0, fmt.Errorf("job id %q: ids start at 1", s)
	}
	return id, nil
}

// Tenant is a user or team that submits jobs.
type Tenant struct {
	Name string `json:"name"`
	// QuotaGPUs caps the GPUs the tenant's running jobs hold, in
	// thousandths of a GPU (a MIG slice or share counts its fraction);
	// 0 means no cap.
	QuotaMilli int `json:"quota_milli,omitempty"`
	// QuotaCPUMilli and QuotaMemoryMiB cap the CPU (milli-cores) and
	// memory the tenant's running jobs ask for; 0 means no cap.
	QuotaCPUMilli  int64 `json:"quota_cpu_milli,omitempty"`
	QuotaMemoryMiB int64 `json:"quota_memory_mib,omitempty"`
	// Cohort names the tenants that lend each other the GPU quota they
	// leave unused: a tenant of a cohort may run beyond its own cap on
	// what its peers' caps leave free, and gets it back by stopping the
	// borrowers' work when it needs it. Only a tenant with a GPU cap has
	// one; "" is none.
	Cohort  string    `json:"cohort,omitempty"`
	Admin   bool      `json:"admin,omitempty"`
	Created time.Time `json:"created"`
	// UnixUser, UID and GID are the Unix account the tenant's jobs run
	// as on a server that runs as root: a login name, or a uid (with a
	// gid when it has no account); GID overrides the account's primary
	// group. Zero values are unset.
	UnixUser string `json:"unix_user,omitempty"`
	UID      uint32 `json:"uid,omitempty"`
	GID      uint32 `json:"gid,omitempty"`
	// MaxGrace caps the grace period (SIGTERM to SIGKILL) of the
	// tenant's jobs; 0 takes the server's cap.
	MaxGrace time.Duration `json:"max_grace,omitempty"`
	// DefMemPerGPUMiB and DefCPUPerGPUMilli are the memory and CPU a
	// task that declares none gets per GPU it uses; 0 takes the
	// server's defaults.
	DefMemPerGPUMiB   int64 `json:"def_mem_per_gpu_mib,omitempty"`
	DefCPUPerGPUMilli int64 `json:"def_cpu_per_gpu_milli,omitempty"`
	// MaxPriority is the highest priority its jobs may ask for (0 by
	// default); priority orders its own jobs, and stops only its own.
	MaxPriority int `json:"max_priority,omitempty"`
	// Budget caps the GPU-hours its jobs use per period, as
	// sched.ParseBudget reads it ("1000/720h", "1000/month"); "" is none.
	Budget string `json:"budget,omitempty"`
	// DiskMiB caps what its jobs keep in the server's state directory
	// (logs, and work directories of jobs without one of their own): the
	// oldest ended jobs' files are removed beyond it; 0 is none.
	DiskMiB int64 `json:"disk_mib,omitempty"`
}

// Record is the accounting of one job run: who used which GPUs, when, how
// much, and how it ended.
type Record struct {
	JobID      uint64    `json:"job_id"`
	Tenant     string    `json:"tenant"`
	Name       string    `json:"name,omitempty"`
	Attempt    int       `json:"attempt"`
	GPUModel   string    `json:"gpu_model,omitempty"`
	MIGProfile string    `json:"mig_profile,omitempty"`
	GPUs       float64   `json:"gpus"` // GPUs held, fractions for slices and shares
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	GPUSeconds float64   `json:"gpu_seconds"`
	State      State     `json:"state"`
	ExitCode   int       `json:"exit_code"`
	Signal     string    `json:"signal,omitempty"`
	Outcome    string    `json:"outcome,omitempty"` // an Outcome* name
	// MaxRSSKiB and CPUSeconds are the most memory a task's processes
	// held at once (the largest of its tasks; its memory cgroup's peak
	// where it has one) and the CPU time they used (all tasks, user and
	// system), where the executor measured them.
	MaxRSSKiB  int64   `json:"max_rss_kib,omitempty"`
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	// The job as submitted, for replaying the history (corral acct
	// --jobs): when, and its shape. Records written before these fields
	// existed have them zero.
	Submitted       time.Time     `json:"submitted,omitzero"`
	Tasks           int           `json:"tasks,omitempty"`
	TaskGPUs        int           `json:"task_gpus,omitempty"` // whole GPUs per task
	GPUMilli        int           `json:"gpu_milli,omitempty"` // a shared fraction of one GPU per task
	CPUMilli        int64         `json:"cpu_milli,omitempty"` // per task
	MemoryMiB       int64         `json:"memory_mib,omitempty"`
	Priority        int           `json:"priority,omitempty"`
	CheckpointEvery time.Duration `json:"checkpoint_every,omitempty"`
	TimeLimit       time.Duration `json:"time_limit,omitempty"`
}

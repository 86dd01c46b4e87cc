package api

import "time"

// JobRequest is a submission: Tasks identical tasks (a gang when more than
// one), each asking for at most one of GPUs, MIG and Share.
type JobRequest struct {
	Name      string   `json:"name,omitempty" yaml:"name"`
	Command   []string `json:"command" yaml:"command"`
	WorkDir   string   `json:"workdir,omitempty" yaml:"workdir"`
	Env       []string `json:"env,omitempty" yaml:"env"`
	GPUs      int      `json:"gpus,omitempty" yaml:"gpus"`
	MIG       string   `json:"mig,omitempty" yaml:"mig"`
	Share     float64  `json:"share,omitempty" yaml:"share"` // a fraction of one GPU, 0 < share < 1
	CPU       float64  `json:"cpu,omitempty" yaml:"cpu"`     // cores per task
	MemoryMiB int64    `json:"memory_mib,omitempty" yaml:"memory_mib"`
	Tasks     int      `json:"tasks,omitempty" yaml:"tasks"`
	// GPUMemoryMiB asks for GPU memory in all instead of GPUs: the
	// scheduler picks the model and the count (gpus, mig, share and
	// tasks are then not given); GPUMemoryPerGPUMiB is the least memory
	// each GPU must have and GPUModels the models allowed. In an answer
	// GPUs and Tasks are what was chosen and Chosen says it in words.
	GPUMemoryMiB       int64    `json:"gpu_memory_mib,omitempty" yaml:"gpu_memory_mib"`
	GPUMemoryPerGPUMiB int64    `json:"gpu_memory_per_gpu_mib,omitempty" yaml:"gpu_memory_per_gpu_mib"`
	GPUModels          []string `json:"gpu_models,omitempty" yaml:"gpu_models"`
	Chosen             string   `json:"chosen,omitempty" yaml:"-"`
	Time               string   `json:"time,omitempty" yaml:"time"` // time limit: a Go duration ("2h30m", "1d") or Slurm's ("90", "1-12:00:00")
	Priority           int      `json:"priority,omitempty" yaml:"priority"`
	Queue              string   `json:"queue,omitempty" yaml:"queue"`
	CheckpointEvery    string   `json:"checkpoint_every,omitempty" yaml:"checkpoint_every"`
	Grace              string   `json:"grace,omitempty" yaml:"grace"`
	Requeue            bool     `json:"requeue,omitempty" yaml:"requeue"`
	// Image runs the command in a container of this image, when the
	// server has a container runtime (--container-runtime).
	Image string `json:"image,omitempty" yaml:"image"`

	// Script is a batch script (starting with #!): the job runs a copy
	// of it, taken at submit, with command as its name and arguments.
	// Its #SBATCH lines are read by the client (corral submit).
	Script string `json:"script,omitempty" yaml:"-"`
	// Array makes the submission a job array, as sbatch's --array
	// (0-99%10, 1,3,5-7, 0-15:4): one job per index.
	Array string `json:"array,omitempty" yaml:"array"`
	// Dependency is sbatch's --dependency (afterok:j000017, singleton);
	// KillOnInvalidDep cancels the job when it can never be met.
	Dependency       string `json:"dependency,omitempty" yaml:"dependency"`
	KillOnInvalidDep bool   `json:"kill_on_invalid_dep,omitempty" yaml:"kill_on_invalid_dep"`
	// Hold submits the job held (sbatch's -H): it waits for corral
	// release.
	Hold bool `json:"hold,omitempty" yaml:"hold"`
	// Begin: not before this time (RFC 3339, or sbatch's forms such as
	// now+1hour, read by the server's clock).
	Begin string `json:"begin,omitempty" yaml:"begin"`
	// Output and Error are sbatch's -o and -e: file name patterns (%j
	// %x %A %a %u %N %n %t %%) relative to the work directory, written
	// as the job's user; OpenMode is truncate (default) or append.
	Output   string `json:"output,omitempty" yaml:"output"`
	Error    string `json:"error,omitempty" yaml:"error"`
	OpenMode string `json:"open_mode,omitempty" yaml:"open_mode"`
	// Umask is the file mode creation mask the tasks get, in octal
	// (0022); absent: the server's.
	Umask string `json:"umask,omitempty" yaml:"umask"`
	// SubmitDir is where the job was submitted from (SLURM_SUBMIT_DIR;
	// default workdir).
	SubmitDir string `json:"submit_dir,omitempty" yaml:"submit_dir"`
	// Signal is sbatch's --signal: [B:]SIG[@SECONDS], sent that long
	// (default 60 s) before the time limit.
	Signal string `json:"signal,omitempty" yaml:"signal"`
}

// JobUpdate changes a waiting job (corral update): the fields given,
// and only those.
type JobUpdate struct {
	Name       *string `json:"name,omitempty"`
	Time       *string `json:"time,omitempty"`
	Priority   *int    `json:"priority,omitempty"`
	Begin      *string `json:"begin,omitempty"`      // "" clears it
	Dependency *string `json:"dependency,omitempty"` // "" clears it
	// ArrayLimit changes the throttle of the job's array (0: none).
	ArrayLimit *int `json:"array_limit,omitempty"`
}

// Requeue puts a running or ended job back in the queue; Hold holds it
// there (scontrol requeuehold).
type Requeue struct {
	Hold bool `json:"hold,omitempty"`
}

// Task is one task of a job as the API shows it.
type Task struct {
	Rank     int    `json:"rank"`
	GPUs     []int  `json:"gpus,omitempty"`
	MIG      string `json:"mig,omitempty"`
	Share    int    `json:"share_milli,omitempty"`
	PID      int    `json:"pid,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
}

// Job is a job as the API shows it.
type Job struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"tenant"`
	State     string     `json:"state"`
	Reason    string     `json:"reason,omitempty"`
	Stopping  string     `json:"stopping,omitempty"`
	Request   JobRequest `json:"request"`
	GPUModel  string     `json:"gpu_model,omitempty"`
	Tasks     []Task     `json:"tasks,omitempty"`
	Attempts  int        `json:"attempts"`
	Submitted time.Time  `json:"submitted"`
	Started   *time.Time `json:"started,omitempty"`
	Ended     *time.Time `json:"ended,omitempty"`
	ExitCode  *int       `json:"exit_code,omitempty"`
	// SlurmState is the state as squeue and sacct name it: PENDING,
	// RUNNING, COMPLETED, FAILED, CANCELLED, PREEMPTED, TIMEOUT (State
	// failed), NODE_FAIL (a lost task or a failed GPU) or OUT_OF_MEMORY
	// (failed: the kernel's OOM killer killed it at its memory limit).
	SlurmState string `json:"slurm_state"`
	// Adjusted says what the server set or lowered in the request to
	// keep it within the admin's limits, in words.
	Adjusted []string `json:"adjusted,omitempty"`
	// Held: its user holds it (corral release lets it run).
	Held bool `json:"held,omitempty"`
	// PendingReason is why a waiting job is not yet scheduled, as squeue
	// names it: JobHeldUser, BeginTime, Dependency,
	// DependencyNeverSatisfied, JobArrayTaskLimit, or Resources and
	// Priority for what the scheduling cycle said.
	PendingReason string `json:"pending_reason,omitempty"`
	// ArrayJob and ArrayIndex place a task of a job array; ArrayID is
	// its name as squeue shows it (j000017_3).
	ArrayJob   string `json:"array_job,omitempty"`
	ArrayIndex *int   `json:"array_index,omitempty"`
	ArrayID    string `json:"array_id,omitempty"`
	// ArrayTasks is how many jobs a submission of an array made (the
	// answer to the submission, which shows its first task).
	ArrayTasks int `json:"array_tasks,omitempty"`
}

// JobList is the answer to a list.
type JobList struct {
	Jobs []Job `json:"jobs"`
}

// CancelRequest cancels every job it selects, in one call, like
// scancel: the jobs named in IDs, or the waiting and running jobs that
// match every filter given (Tenant, States, Name). A request selects
// nothing unless it names IDs or gives a filter.
type CancelRequest struct {
	IDs    []string `json:"ids,omitempty"`
	Tenant string   `json:"tenant,omitempty"` // admins: any tenant; others: their own
	States []string `json:"states,omitempty"` // pending, preempted, running
	Name   string   `json:"name,omitempty"`   // the job name
}

// CancelResult is the answer to a CancelRequest: the jobs cancelled or
// being stopped, and why the named ones that were not could not be.
type CancelResult struct {
	Jobs   []Job    `json:"jobs"`
	Errors []string `json:"errors,omitempty"`
}

// Explain says why a job waits.
type Explain struct {
	ID      string   `json:"id"`
	State   string   `json:"state"`
	Summary string   `json:"summary"`
	Reasons []string `json:"reasons,omitempty"`
	// Filtered counts, by reason code, the nodes that hold none of the
	// job's tasks now, when the fleet lacks the room (the words are
	// among Reasons).
	Filtered []NodeCount `json:"filtered,omitempty"`
	// EstimatedStart is when the job could start if running work ends at
	// its time limits; absent when that is unknown.
	EstimatedStart *time.Time `json:"estimated_start,omitempty"`
}

// NodeCount is how many nodes one reason kept from holding a task.
// Reason is a code: unhealthy, spare, no-gpu, model, static-mig, no-mig,
// mig-profile, no-sharing, no-time-slices, gpus, cpu, memory, spread,
// taint (Detail then names the taint).
type NodeCount struct {
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
	Nodes  int    `json:"nodes"`
}

// GPU is one GPU of the machine and what runs on it.
type GPU struct {
	Index     int     `json:"index"`
	UUID      string  `json:"uuid,omitempty"`
	Model     string  `json:"model"`
	MemoryMiB int64   `json:"memory_mib"`
	MIG       bool    `json:"mig"`
	Healthy   bool    `json:"healthy"`
	Problem   string  `json:"problem,omitempty"` // why it is unhealthy
	Used      float64 `json:"used"`              // fraction of the GPU held
	Jobs      []Use   `json:"jobs,omitempty"`
}

// Use is one job's task on a GPU.
type Use struct {
	Job    string  `json:"job"`
	Tenant string  `json:"tenant"`
	Rank   int     `json:"rank"`
	MIG    string  `json:"mig,omitempty"`
	Share  float64 `json:"share"` // fraction of the GPU
	// Other marks another tenant's job, shown to a tenant that is not an
	// admin without its name, tenant or rank.
	Other bool `json:"other,omitempty"`
}

// GPUList is the answer to gpus.
type GPUList struct {
	GPUs      []GPU      `json:"gpus"`
	Isolation *Isolation `json:"isolation,omitempty"`
}

// Isolation is how the server fences jobs from one another, from the
// server and from GPUs not theirs, and what does not hold.
type Isolation struct {
	// RunAs is "tenant" when each job runs as its tenant's Unix user,
	// "server" when every job runs as the server's own user, User.
	RunAs string `json:"run_as"`
	User  string `json:"user"` // the server's Unix user
	// Cgroups describes the tasks' cgroups, or says "none".
	Cgroups string `json:"cgroups"`
	// Limits: the kernel enforces the jobs' memory and CPU requests.
	Limits bool `json:"limits"`
	// Devices: a task can open only its own GPUs' device files.
	Devices bool `json:"devices"`
	// Problems says, in words, what does not hold.
	Problems []string `json:"problems,omitempty"`
}

// Tenant is a tenant as the API shows it.
type Tenant struct {
	Name           string    `json:"name"`
	QuotaGPUs      float64   `json:"quota_gpus,omitempty"`
	QuotaCPUs      float64   `json:"quota_cpus,omitempty"`
	QuotaMemoryMiB int64     `json:"quota_memory_mib,omitempty"`
	Cohort         string    `json:"cohort,omitempty"`
	Admin          bool      `json:"admin,omitempty"`
	Created        time.Time `json:"created"`
	UnixUser       string    `json:"unix_user,omitempty"`
	UID            uint32    `json:"uid,omitempty"`
	GID            uint32    `json:"gid,omitempty"`
	// MaxGrace caps its jobs' grace periods; "" takes the server's cap.
	MaxGrace string `json:"max_grace,omitempty"`
	// DefMemPerGPUMiB and DefCPUsPerGPU are what a task that declares
	// no memory or CPU gets per GPU; 0 takes the server's defaults.
	DefMemPerGPUMiB int64   `json:"def_mem_per_gpu_mib,omitempty"`
	DefCPUsPerGPU   float64 `json:"def_cpus_per_gpu,omitempty"`
	// MaxPriority is the highest priority its jobs may ask for.
	MaxPriority int `json:"max_priority,omitempty"`
	// Budget caps its GPU-hours per period: GPUH/PERIOD, "" for none.
	Budget string `json:"budget,omitempty"`
	// DiskMiB caps what its jobs keep in the server's state directory
	// (logs, and the work directories of jobs without --workdir): each
	// log is cut at it, and the oldest ended jobs' files are removed
	// beyond it; 0 for none.
	DiskMiB int64 `json:"disk_mib,omitempty"`
}

// TenantRequest creates a tenant. UnixUser (a login name) or UID, and
// GID, are the Unix account its jobs run as on a server run by root;
// GID overrides the account's primary group, and a UID without an
// account needs one.
type TenantRequest struct {
	Name           string  `json:"name"`
	QuotaGPUs      float64 `json:"quota_gpus,omitempty"` // 0: no cap
	QuotaCPUs      float64 `json:"quota_cpus,omitempty"` // cores its running jobs may ask for; 0: no cap
	QuotaMemoryMiB int64   `json:"quota_memory_mib,omitempty"`
	// Cohort: tenants of one cohort lend each other the GPU quota they
	// leave unused (needs a GPU quota); "" for none.
	Cohort   string `json:"cohort,omitempty"`
	Admin    bool   `json:"admin,omitempty"`
	UnixUser string `json:"unix_user,omitempty"`
	UID      uint32 `json:"uid,omitempty"`
	GID      uint32 `json:"gid,omitempty"`
	// MaxGrace caps its jobs' grace periods (a Go duration, "30s");
	// "" takes the server's cap (--max-grace).
	MaxGrace string `json:"max_grace,omitempty"`
	// DefMemPerGPUMiB and DefCPUsPerGPU are what a task that declares
	// no memory or CPU gets per GPU; 0 takes the server's defaults.
	DefMemPerGPUMiB int64   `json:"def_mem_per_gpu_mib,omitempty"`
	DefCPUsPerGPU   float64 `json:"def_cpus_per_gpu,omitempty"`
	// MaxPriority is the highest priority its jobs may ask for.
	MaxPriority int `json:"max_priority,omitempty"`
	// Budget caps the GPU-hours its jobs use per period: GPUH/PERIOD,
	// a duration (720h) or month (the calendar month, UTC); "" for none.
	// A job that would overrun it waits; running jobs are never stopped.
	Budget string `json:"budget,omitempty"`
	// DiskMiB caps what its jobs keep in the server's state directory;
	// 0 for none (Tenant.DiskMiB).
	DiskMiB int64 `json:"disk_mib,omitempty"`
}

// TenantUpdate changes a tenant: the fields given, and only those. An
// empty unix_user or a zero uid or gid unsets it.
type TenantUpdate struct {
	QuotaGPUs       *float64 `json:"quota_gpus,omitempty"`
	QuotaCPUs       *float64 `json:"quota_cpus,omitempty"`
	QuotaMemoryMiB  *int64   `json:"quota_memory_mib,omitempty"`
	Cohort          *string  `json:"cohort,omitempty"` // "" leaves the cohort
	UnixUser        *string  `json:"unix_user,omitempty"`
	UID             *uint32  `json:"uid,omitempty"`
	GID             *uint32  `json:"gid,omitempty"`
	MaxGrace        *string  `json:"max_grace,omitempty"`           // "" or "0s": the server's cap
	DefMemPerGPUMiB *int64   `json:"def_mem_per_gpu_mib,omitempty"` // 0: the server's
	DefCPUsPerGPU   *float64 `json:"def_cpus_per_gpu,omitempty"`    // 0: the server's
	MaxPriority     *int     `json:"max_priority,omitempty"`
	Budget          *string  `json:"budget,omitempty"`   // "": none
	DiskMiB         *int64   `json:"disk_mib,omitempty"` // 0: none
}

// TenantList is the answer to tenants.
type TenantList struct {
	Tenants []Tenant `json:"tenants"`
}

// Token is a newly issued token; it is shown once.
type Token struct {
	Tenant string `json:"tenant"`
	Token  string `json:"token"`
}

// TokenInfo is one of a tenant's tokens as the API lists it: never the
// token, only a short ID and when it was made and last used (to the
// minute).
type TokenInfo struct {
	ID       string     `json:"id"`
	Created  *time.Time `json:"created,omitempty"`
	LastUsed *time.Time `json:"last_used,omitempty"`
}

// TokenList is the answer to a tenant's tokens.
type TokenList struct {
	Tenant string      `json:"tenant"`
	Tokens []TokenInfo `json:"tokens"`
}

// AuditEntry is one admin action.
type AuditEntry struct {
	Seq    uint64    `json:"seq"`
	Time   time.Time `json:"time"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"`
	Target string    `json:"target"`
	Detail string    `json:"detail,omitempty"`
}

// AuditLog is the answer to audit.
type AuditLog struct {
	Entries []AuditEntry `json:"entries"`
}

// TenantDeleted is the answer to a tenant's deletion: the jobs a drain
// cancelled.
type TenantDeleted struct {
	Tenant    string   `json:"tenant"`
	Cancelled []string `json:"cancelled,omitempty"`
}

// Record is one accounting record.
type Record struct {
	Job        string    `json:"job"`
	Tenant     string    `json:"tenant"`
	Name       string    `json:"name,omitempty"`
	Attempt    int       `json:"attempt"`
	GPUModel   string    `json:"gpu_model,omitempty"`
	MIGProfile string    `json:"mig_profile,omitempty"`
	GPUs       float64   `json:"gpus"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	GPUSeconds float64   `json:"gpu_seconds"`
	State      string    `json:"state"`
	ExitCode   int       `json:"exit_code"`
	Signal     string    `json:"signal,omitempty"`
	SlurmState string    `json:"slurm_state"` // how the attempt ended, as sacct names it (REQUEUED: an older record of a requeued attempt)
	// MaxRSSKiB (the largest task's peak memory: its memory cgroup's
	// peak where it has one, else its largest process's resident set)
	// and CPUSeconds (user and system, all tasks), where the executor
	// measured them.
	MaxRSSKiB  int64   `json:"max_rss_kib,omitempty"`
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	// The job as submitted (zero in records from before they were kept):
	// what corral acct --jobs exports for corral sim --workload jobs.
	Submitted         time.Time `json:"submitted,omitzero"`
	Tasks             int       `json:"tasks,omitempty"`
	TaskGPUs          int       `json:"task_gpus,omitempty"` // whole GPUs per task
	GPUMilli          int       `json:"gpu_milli,omitempty"` // a shared fraction of one GPU per task
	CPUMilli          int64     `json:"cpu_milli,omitempty"` // per task
	MemoryMiB         int64     `json:"memory_mib,omitempty"`
	Priority          int       `json:"priority,omitempty"`
	CheckpointSeconds float64   `json:"checkpoint_every_s,omitempty"`
	TimeLimitSeconds  float64   `json:"time_limit_s,omitempty"`
}

// Sum is one tenant's use in a period.
type Sum struct {
	Tenant     string    `json:"tenant"`
	Period     time.Time `json:"period,omitzero"`
	GPUModel   string    `json:"gpu_model,omitempty"`
	MIGProfile string    `json:"mig_profile,omitempty"`
	Jobs       int       `json:"jobs"`
	GPUSeconds float64   `json:"gpu_seconds"`
}

// Acct is the answer to acct.
type Acct struct {
	Records []Record `json:"records"`
	Sums    []Sum    `json:"sums"`
	// Machine is what the server schedules onto, so that a replay of the
	// records (corral acct --jobs, corral sim --workload jobs) runs on it.
	Machine *Machine `json:"machine,omitempty"`
}

// Machine is the one machine a server schedules onto: every GPU it was
// given, healthy or not.
type Machine struct {
	GPUModel   string `json:"gpu_model"`
	GPUs       int    `json:"gpus"`
	MIG        bool   `json:"mig"`         // dynamic MIG
	TimeSlices int    `json:"time_slices"` // shares per GPU when MIG is off
	CPUMilli   int64  `json:"cpu_milli"`
	MemoryMiB  int64  `json:"memory_mib"`
}

// Whoami says who a token belongs to.
type Whoami struct {
	Tenant string `json:"tenant"`
	Admin  bool   `json:"admin"`
}

// Error is every error answer.
type Error struct {
	Error string `json:"error"`
}

// Package executor runs tasks as real processes on the local machine and
// keeps track of them across restarts of the server that started them.
//
// Start launches a small supervisor: the running binary re-executed in a
// hidden mode (see supervise.go). The supervisor starts the task in a
// process group of its own, enforces the time limit, turns a stop request
// into SIGTERM and, after the grace period, SIGKILL to the whole group,
// reaps every process of the task, and writes the exit record. Because the
// supervisor lives in a session of its own, the task and its exit code
// survive the death of the server (even kill -9), and Adopt lets the next
// server re-attach to the task.
//
// Files under Spec.Dir, named after Spec.ID:
//
//	<ID>.out    the task's standard output (appended to)
//	<ID>.err    the task's standard error (appended to)
//	<ID>.state  supervisor and task process ids, written once the task runs
//	<ID>.stop   a pending stop request (its grace period)
//	<ID>.exit   the exit record: the task's Result, written atomically
//	<ID>.reserve  room held for the exit record while the task runs, given
//	            up to write it on a full disk
//
// With Spec.OutputMax set, the supervisor copies the task's output through
// pipes into <ID>.out and <ID>.err and ends each at the cap with
// TruncatedMarker, dropping the rest (output_linux.go).
//
// A stopped or timed-out task gets SIGTERM, then SIGKILL after its grace
// period, on every process of its group; when its main process exits, the
// rest of the group is killed and every descendant, even one that left the
// group, is reaped before the exit record is written, so a Done task
// holds no GPU. If the supervisor itself is killed, the server that
// follows it kills the task's group and reports the task Lost.
//
// A task's environment is a default PATH, its Spec.Env, its user's HOME,
// USER and LOGNAME, and the device and rank variables: nothing of the
// server's own environment, which may hold secrets, reaches it. With
// Spec.User set, the supervisor (which stays root) starts the task under
// that uid, gid and supplementary groups; the task's records and logs
// are the supervisor's (0600), so that a task cannot forge its exit
// record.
//
// With Spec.Cgroups set (see OpenCgroups), each task gets a cgroup of its
// own in each writable hierarchy, v1 (memory, cpu, devices, freezer) or
// v2: the supervisor joins it, forks the task and returns, so the task
// starts inside it. Signals go to every process of the cgroup, and the
// cgroup is killed whole (cgroup.kill on v2; on v1, frozen then killed)
// when the task ends, is stopped or loses its supervisor, and removed:
// no process of a task outlives it, even one that left its group.
// Spec.MemoryBytes and Spec.CPUMilli become memory.limit_in_bytes (v1) or
// memory.max (v2) and a CFS quota, Spec.PidsMax pids.max; a task whose
// cgroup's OOM killer killed a process ends with Result.OOMKilled. A task may open only the basic
// devices and Spec.DeviceFiles (its GPUs): the v1 devices controller
// (deny all, then allow), or on v2 an eBPF device program assembled by
// hand and attached with the bpf system call.
//
// The supervisor mode is switched on by an environment variable that this
// package's init checks, so any binary that links the package (corral, a
// test binary) can supervise without changes to its main.
//
// Tasks survive a restart of the server only if whatever restarts it does
// not kill the whole process tree: under systemd, run the server with
// KillMode=process, and Delegate=yes so that systemd leaves the tasks'
// cgroups alone (deploy/corral-server.service).
//
// A task may also ask for copies of its output in files of its own
// (sbatch's -o and -e), which the supervisor opens with the task's
// user's file system credentials on a thread it then discards
// (userfile_linux.go), a umask, and a signal some time before its time
// limit; its Result holds the peak memory and CPU time of its processes
// as the kernel counted them for the supervisor.
//
// Start from here: Start and Adopt in task.go, then supervise.go; users
// in user.go, cgroups in cgroup_linux.go, devices in devices_linux.go and
// devfilter_linux.go.
//
// The package needs Linux: process groups, a child subreaper and /proc.
// It imports no other corral package.
package executor

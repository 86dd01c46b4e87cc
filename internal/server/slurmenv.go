package server

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/slurmfmt"
	"github.com/corral-sched/corral/internal/store"
)

// hostName is the machine's short name when it resolves, else
// localhost: what a job reads as its node list, and what Lightning's
// SLURMEnvironment.main_address and submitit's JobEnvironment.hostnames
// take for the address of rank 0 (read in
// lightning/fabric/plugins/environments/slurm.py and
// submitit/slurm/slurm.py).
func hostName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	h, _, _ = strings.Cut(h, ".")
	if _, err := net.LookupHost(h); err != nil {
		return "localhost"
	}
	return h
}

// slurmEnv is what sbatch and srun set for rank of j, as the tools that
// read them expect:
//   - PyTorch Lightning's SLURMEnvironment detects Slurm by
//     SLURM_NTASKS (unless SLURM_JOB_NAME is bash or interactive), reads
//     SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID and SLURM_NODELIST, takes
//     an int from SLURM_JOB_ID, and refuses SLURM_NTASKS above 1 without
//     SLURM_NTASKS_PER_NODE;
//   - submitit's SlurmJobEnvironment reads SLURM_JOB_ID, SLURM_NTASKS,
//     SLURM_JOB_NUM_NODES, SLURM_NODEID, SLURM_JOB_NODELIST,
//     SLURM_PROCID, SLURM_LOCALID, SLURM_ARRAY_JOB_ID and
//     SLURM_ARRAY_TASK_ID.
//
// So job IDs are numbers, as Slurm's, and SLURM_NTASKS is set only when
// the job named its tasks (-n) or has several, as sbatch sets it: a
// one-task job that runs torchrun itself is not taken for a Slurm task
// by Lightning.
func (s *Server) slurmEnv(j *store.Job, rank int) []string {
	id := strconv.FormatUint(j.ID, 10)
	tasks := strconv.Itoa(max(j.Spec.Tasks, 1))
	env := []string{"SLURM_JOB_ID=" + id, "SLURM_JOBID=" + id, "SLURM_JOB_NAME=" + jobName(j),
		"SLURM_JOB_USER=" + s.jobUserName(j), "SLURM_JOB_ACCOUNT=" + j.Tenant,
		"SLURM_SUBMIT_DIR=" + s.submitDir(j), "SLURM_SUBMIT_HOST=" + s.host,
		"SLURM_JOB_NODELIST=" + s.host, "SLURM_NODELIST=" + s.host, "SLURMD_NODENAME=" + s.host,
		"SLURM_JOB_NUM_NODES=1", "SLURM_NNODES=1", "SLURM_NODEID=0",
		"SLURM_PROCID=" + strconv.Itoa(rank), "SLURM_LOCALID=" + strconv.Itoa(rank),
		"SLURM_RESTART_COUNT=" + strconv.Itoa(max(j.Attempts-1, 0)),
		"SLURM_JOB_GPUS=" + joinInts(gpusOf(j.Tasks)), "SLURM_GPUS_ON_NODE=" + strconv.Itoa(len(gpusOf(j.Tasks))),
		"CORRAL_JOB_NAME=" + jobName(j), "CORRAL_SUBMIT_DIR=" + s.submitDir(j)}
	if j.Spec.TasksGiven || j.Spec.Tasks > 1 {
		env = append(env, "SLURM_NTASKS="+tasks, "SLURM_NPROCS="+tasks, "SLURM_NTASKS_PER_NODE="+tasks, "SLURM_TASKS_PER_NODE="+tasks)
	}
	if j.Spec.CPUMilli > 0 {
		env = append(env, "SLURM_CPUS_PER_TASK="+strconv.FormatInt(max(j.Spec.CPUMilli/1000, 1), 10))
	}
	if j.Spec.MemoryMiB > 0 {
		env = append(env, "SLURM_MEM_PER_NODE="+strconv.FormatInt(j.Spec.MemoryMiB*int64(max(j.Spec.Tasks, 1)), 10))
	}
	if u := j.Spec.Umask; u != nil {
		env = append(env, fmt.Sprintf("SLURM_UMASK=%04o", *u))
	}
	return append(env, arrayEnv(j)...)
}

// arrayEnv is what sbatch sets for a task of a job array, and corral's
// own names of the same.
func arrayEnv(j *store.Job) []string {
	if j.ArrayJob == 0 || j.Array == nil {
		return nil
	}
	a, idx := j.Array, strconv.Itoa(j.ArrayIndex)
	arr := strconv.FormatUint(j.ArrayJob, 10)
	return []string{"SLURM_ARRAY_JOB_ID=" + arr, "SLURM_ARRAY_TASK_ID=" + idx,
		"SLURM_ARRAY_TASK_COUNT=" + strconv.Itoa(a.Count), "SLURM_ARRAY_TASK_MIN=" + strconv.Itoa(a.Min),
		"SLURM_ARRAY_TASK_MAX=" + strconv.Itoa(a.Max), "SLURM_ARRAY_TASK_STEP=" + strconv.Itoa(a.Step),
		"CORRAL_ARRAY_JOB_ID=" + store.FormatID(j.ArrayJob), "CORRAL_ARRAY_TASK_ID=" + idx}
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

// submitDir is where j was submitted from: its own, else its workdir,
// else the attempt's.
func (s *Server) submitDir(j *store.Job) string {
	if j.Spec.SubmitDir != "" {
		return j.Spec.SubmitDir
	}
	return s.workDir(j)
}

// jobUserName is the Unix user j runs as, by name (%u, SLURM_JOB_USER):
// its tenant's, else the server's, else the tenant's name.
func (s *Server) jobUserName(j *store.Job) string {
	t := s.tenants[j.Tenant]
	switch {
	case s.cfg.RunAs == RunAsTenant && t.UnixUser != "":
		return t.UnixUser
	case s.cfg.RunAs == RunAsTenant && t.UID != 0:
		return strconv.FormatUint(uint64(t.UID), 10)
	case s.cfg.RunAs != RunAsTenant:
		return serverUser()
	}
	return j.Tenant
}

// scriptPath is where the batch script of an attempt of j is written.
func (s *Server) scriptPath(j *store.Job) string {
	return filepath.Join(s.taskDir(j), "slurm_script")
}

// writeScript writes j's batch script for its attempt, readable and
// runnable by the job's user alone.
func (s *Server) writeScript(j *store.Job, u *executor.User) error {
	if j.Spec.Script == "" {
		return nil
	}
	p := s.scriptPath(j)
	if err := os.WriteFile(p, []byte(j.Spec.Script), 0o500); err != nil {
		return fmt.Errorf("batch script: %w", err)
	}
	if err := os.Chmod(p, 0o500); err != nil {
		return fmt.Errorf("batch script: %w", err)
	}
	if u != nil {
		if err := os.Chown(p, int(u.UID), int(u.GID)); err != nil {
			return fmt.Errorf("batch script: %w", err)
		}
	}
	return nil
}

// command is what rank of j runs: its command, with a batch script's
// name replaced by the attempt's copy of it.
func (s *Server) command(j *store.Job) []string {
	if j.Spec.Script == "" {
		return j.Spec.Command
	}
	return append([]string{s.scriptPath(j)}, j.Spec.Command[1:]...)
}

// outputFiles are the files of sbatch's -o and -e for rank of j, as
// absolute paths: -e alone keeps the output in corral's log, -o alone
// takes standard error too.
func (s *Server) outputFiles(j *store.Job, rank int) (out, errPath string, err error) {
	v := slurmfmt.PatternVars{JobID: strconv.FormatUint(j.ID, 10), Name: jobName(j), User: s.jobUserName(j), Host: s.host, Rank: rank}
	if j.ArrayJob != 0 {
		v.ArrayJobID, v.ArrayIndex = strconv.FormatUint(j.ArrayJob, 10), strconv.Itoa(j.ArrayIndex)
	}
	expand := func(p string) (string, error) {
		if p == "" {
			return "", nil
		}
		name, err := slurmfmt.Expand(p, v)
		if err != nil || filepath.IsAbs(name) {
			return name, err
		}
		return filepath.Join(s.workDir(j), name), nil
	}
	if out, err = expand(j.Spec.Output); err != nil {
		return "", "", err
	}
	if errPath, err = expand(j.Spec.Error); err != nil {
		return "", "", err
	}
	if errPath == "" {
		errPath = out
	}
	return out, errPath, nil
}

package server

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/store"
)

// run is a running job: its record and its tasks' processes.
type run struct {
	job      store.Job
	tasks    []*executor.Task
	drained  bool          // its GPU failed: it is not in the core's state
	grace    time.Duration // its grace period within the admin's cap (graceOf)
	stopOnce sync.Once
}

// stop stops every task with the job's grace period, within the cap.
func (r *run) stop() {
	r.stopOnce.Do(func() {
		for _, t := range r.tasks {
			t.Stop(r.grace)
		}
	})
}

// ended is a run whose tasks have all ended.
type ended struct {
	id      uint64
	results []executor.Result
	err     error // the tasks could not all be started or adopted
}

// taskDir is where the tasks of one attempt of a job keep their files.
func (s *Server) taskDir(j *store.Job) string {
	return filepath.Join(s.cfg.StateDir, j.Name(), "attempt-"+strconv.Itoa(j.Attempts))
}

// taskSpec is what the executor runs for rank i of j.
func (s *Server) taskSpec(j *store.Job, i int) executor.Spec {
	t := j.Tasks[i]
	mem, cpu, pids := s.taskLimits(j)
	env := append(append([]string(nil), j.Spec.Env...), "CORRAL_JOB_ID="+j.Name(), "CORRAL_TENANT="+j.Tenant)
	spec := executor.Spec{
		ID:          j.Name() + "-" + strconv.Itoa(i),
		Command:     s.command(j),
		WorkDir:     s.workDir(j),
		Env:         append(env, s.slurmEnv(j, i)...),
		Devices:     t.Devices,
		Dir:         s.taskDir(j),
		TimeLimit:   j.Spec.TimeLimit,
		Grace:       s.graceOf(j),
		Cgroups:     s.iso.cgroups,
		CPUMilli:    cpu,
		MemoryBytes: mem,
		PidsMax:     pids,
		OutputMax:   s.outputMax(j),
		DeviceFiles: s.deviceFiles(t),
		Umask:       j.Spec.Umask,
	}
	if j.Spec.Signal != "" {
		spec.WarnSignal, spec.WarnBefore, spec.WarnMainOnly = j.Spec.Signal, j.Spec.SignalBefore, j.Spec.SignalMainOnly
	}
	if out, errPath, err := s.outputFiles(j, i); err == nil {
		spec.OutputFile, spec.ErrorFile, spec.OutputAppend = out, errPath, j.Spec.Append
	}
	if t.MIG != "" {
		spec.Env = append(spec.Env, "CORRAL_MIG_PROFILE="+t.MIG)
	}
	if e := j.Spec.CheckpointEvery; e > 0 {
		spec.Env = append(spec.Env, "CORRAL_CHECKPOINT_EVERY="+strconv.Itoa(int(e.Seconds())))
	}
	if j.Spec.Tasks > 1 {
		spec.WorldSize, spec.Rank, spec.LocalRank = j.Spec.Tasks, i, i
		spec.MasterAddr, spec.MasterPort = "127.0.0.1", j.Port
	}
	if j.Spec.Image != "" {
		spec.Command = s.containerCommand(j, i, spec)
	}
	return spec
}

// containerCommand wraps rank i's command in the container runtime: the
// assigned GPUs (or MIG instance) through --gpus, the job's and corral's
// variables passed in by name from the task's environment, the host
// network (gang ranks reach MASTER_ADDR), and the work directory mounted
// and used when there is one. The runtime forwards SIGTERM to the
// container, so the grace period holds.
func (s *Server) containerCommand(j *store.Job, i int, spec executor.Spec) []string {
	args := []string{s.cfg.ContainerRuntime, "run", "--rm", "--init", "--network=host",
		"--name", "corral-" + j.Name() + "-" + strconv.Itoa(i) + "-a" + strconv.Itoa(j.Attempts)}
	if len(spec.Devices) > 0 {
		args = append(args, "--gpus", `"device=`+strings.Join(spec.Devices, ",")+`"`)
	}
	pass := []string{"CORRAL_MIG_PROFILE", "CORRAL_CHECKPOINT_EVERY"}
	if j.Spec.Tasks > 1 {
		pass = append(pass, "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
	}
	seen := map[string]bool{}
	for _, kv := range spec.Env { // the job's, corral's and Slurm's
		if k, _, _ := strings.Cut(kv, "="); !seen[k] {
			seen[k] = true
			pass = append(pass, k)
		}
	}
	for _, k := range pass {
		args = append(args, "-e", k)
	}
	if wd := j.Spec.WorkDir; wd != "" {
		args = append(args, "-v", wd+":"+wd, "-w", wd)
	}
	return append(append(args, j.Spec.Image), j.Spec.Command...)
}

// start persists the decision, taken at the cycle's time at, to run j
// where p says, then starts its tasks and records their process ids. The
// jobs a cycle starts share its time, so that the next cycle weighs the
// work each would lose by the same clock. The caller holds s.mu.
func (s *Server) start(j store.Job, p *gang.Placement, at time.Time) error {
	j.State = store.Running
	j.Tasks = s.placementGPUs(p)
	j.Attempts++
	j.Started, j.Ended, j.ExitCode, j.Outcome = at.UTC(), time.Time{}, nil, ""
	j.Reason, j.Stopping, j.GPUModel, j.Port = "", "", s.model.Name, 0
	if j.Spec.Tasks > 1 {
		port, err := freePort()
		if err != nil {
			s.state.Release(j.Name())
			return err
		}
		j.Port = port
	}
	if err := s.st.Update(func(tx *store.Tx) error { return tx.PutJob(&j) }); err != nil {
		s.state.Release(j.Name())
		return fmt.Errorf("persist start of %s: %w", j.Name(), err)
	}
	if s.startRecorded != nil {
		s.startRecorded(j)
	}
	delete(s.waiting, j.ID)
	delete(s.waits, j.ID)
	r := &run{job: j, grace: s.graceOf(&j)}
	s.runs[j.ID] = r
	u, err := s.jobUser(j.Tenant)
	if err == nil {
		err = s.prepareTaskDirs(&j, u)
	}
	if err == nil {
		err = s.writeScript(&j, u)
	}
	if err != nil {
		s.abandon(r, err)
		return err
	}
	for i := range j.Tasks {
		spec := s.taskSpec(&j, i)
		spec.User = u
		t, err := executor.Start(spec)
		if err != nil {
			s.abandon(r, fmt.Errorf("start rank %d: %w", i, err))
			return err
		}
		r.tasks = append(r.tasks, t)
		r.job.Tasks[i].PID = t.PID()
	}
	if err := s.st.Update(func(tx *store.Tx) error { return tx.PutJob(&r.job) }); err != nil {
		s.log.Error("persist pids", "job", j.Name(), "err", err)
	}
	s.log.Info("started job", "job", j.Name(), "tenant", j.Tenant, "gpus", gpusOf(j.Tasks), "attempt", j.Attempts)
	s.metrics.started.Inc()
	go s.watch(r, nil)
	return nil
}

// abandon stops the tasks of a run that could not start whole; watch
// reports its end with err.
func (s *Server) abandon(r *run, err error) {
	r.stop()
	go s.watch(r, err)
}

func gpusOf(tasks []store.Task) []int {
	var out []int
	for _, t := range tasks {
		out = append(out, t.GPUs...)
	}
	return out
}

// watch waits for every task of r to end and hands the results to the
// loop. When one task fails, the others are stopped: a gang lives and dies
// whole.
func (s *Server) watch(r *run, err error) {
	done := make(chan int, len(r.tasks))
	for i, t := range r.tasks {
		go func() { <-t.Done(); done <- i }()
	}
	for range r.tasks {
		i := <-done
		if res := r.tasks[i].Result(); res.ExitCode != 0 || res.Stopped || res.TimedOut {
			r.stop()
		}
	}
	e := ended{id: r.job.ID, err: err}
	for _, t := range r.tasks {
		e.results = append(e.results, t.Result())
	}
	select {
	case s.ended <- e:
	case <-s.stopped:
	}
}

// freePort asks the kernel for a free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// errLost marks a run whose tasks vanished across a restart.
var errLost = errors.New("task lost across a server restart")

package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/slurmfmt"
	"github.com/corral-sched/corral/internal/store"
)

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request, _ store.Tenant) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleWhoami(w http.ResponseWriter, _ *http.Request, who store.Tenant) {
	writeJSON(w, http.StatusOK, api.Whoami{Tenant: who.Name, Admin: who.Admin})
}

func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	req, err := decodeJob(r)
	if err != nil {
		writeError(w, errorCode(err, http.StatusBadRequest), err.Error())
		return
	}
	spec, err := s.specFor(req, who)
	if err != nil {
		writeError(w, errorCode(err, http.StatusUnprocessableEntity), err.Error())
		return
	}
	if err := s.neverAdmitted(spec, who); err != nil {
		writeError(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	if s.cfg.RunAs == RunAsServerOneTenant {
		s.soleMu.Lock() // no other tenant's job slips in between the check and the submission
		defer s.soleMu.Unlock()
	}
	if err := s.admitTenant(who); err != nil {
		writeError(w, errorCode(err, http.StatusForbidden), err.Error())
		return
	}
	if err := s.roomToSubmit(); err != nil {
		writeError(w, http.StatusInsufficientStorage, err.Error())
		return
	}
	if spec.Dependency, err = s.resolveDeps(req.Dependency, who); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	jobs, err := s.submitJobs(store.Job{Tenant: who.Name, Spec: spec, Held: req.Hold}, req.Array)
	if err != nil {
		writeError(w, errorCode(err, diskCode(err)), err.Error())
		return
	}
	for _, j := range jobs {
		s.enqueue(j.ID)
	}
	v := view(&jobs[0])
	if req.Array != "" {
		v.ArrayTasks = len(jobs)
	}
	writeJSON(w, http.StatusCreated, v)
}

// submitJobs stores one job made from tmpl, or the tasks of the array
// that array (sbatch's --array) describes, in one transaction.
func (s *Server) submitJobs(tmpl store.Job, array string) ([]store.Job, error) {
	if array == "" {
		j, err := s.st.SubmitJob(tmpl, s.now())
		return []store.Job{j}, err
	}
	a, err := slurmfmt.ParseArrayUpTo(array, s.cfg.MaxArrayTasks)
	if err != nil {
		return nil, &httpError{http.StatusBadRequest, fmt.Errorf("array %q: %w (this server takes at most %d tasks an array: its --max-array-size)", array, err, s.cfg.MaxArrayTasks)}
	}
	info := store.Array{Count: len(a.Indices), Min: a.Indices[0], Max: a.Indices[len(a.Indices)-1], Step: a.Step(), Limit: a.Limit}
	return s.st.SubmitArray(tmpl, s.now(), a.Indices, info)
}

// neverAdmitted says why no quota the submitting tenant could ever hold
// or borrow admits a job of spec, or nil.
func (s *Server) neverAdmitted(spec store.Spec, who store.Tenant) error {
	return s.refuseForever(&store.Job{Tenant: who.Name, Spec: spec}, who)
}

// httpError is an error with the status code it answers with.
type httpError struct {
	code int
	err  error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

// errorCode is err's status code, or def.
func errorCode(err error, def int) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.code
	}
	return def
}

// decodeJob reads a job request strictly and checks it against the schema
// (api/openapi.yaml): fields set to a forbidden zero value ("share": 0,
// "tasks": 0) included, which the request alone cannot tell from absent
// ones. What the schema forbids is a 400; a body the server cannot read
// has its own code (413, 415).
func decodeJob(r *http.Request) (api.JobRequest, error) {
	var req api.JobRequest
	var raw json.RawMessage
	if code, err := decode(r, &raw); err != nil {
		return req, &httpError{code, err}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("invalid JSON: %w", err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		return req, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := req.Validate(); err != nil {
		return req, err
	}
	return req, api.CheckSetFields(fields)
}

// enqueue hands a submitted job to the scheduling loop without waiting
// for its lock; the loop's next cycle takes it in (admitSubmitted).
func (s *Server) enqueue(id uint64) {
	s.inMu.Lock()
	s.incoming = append(s.incoming, id)
	s.inMu.Unlock()
	s.poke()
}

// admitSubmitted moves the submitted jobs into the waiting set, unless they were
// cancelled in between. The caller holds s.mu.
func (s *Server) admitSubmitted() {
	s.inMu.Lock()
	ids := s.incoming
	s.incoming = nil
	s.inMu.Unlock()
	if len(ids) == 0 {
		return
	}
	err := s.st.View(func(tx *store.Tx) error {
		for _, id := range ids {
			j, err := tx.Job(id)
			if err != nil {
				return err
			}
			if j.State == store.Pending {
				s.waiting[id] = j
			}
		}
		return nil
	})
	if err != nil {
		s.log.Error("admit submitted jobs", "err", err)
	}
}

// specOf converts a request the schema allows and checks it against the
// machine.
func (s *Server) specOf(req api.JobRequest) (store.Spec, error) {
	d, err := req.Validate()
	if err != nil {
		return store.Spec{}, &httpError{http.StatusBadRequest, err}
	}
	spec := store.Spec{
		Name: req.Name, Command: req.Command, WorkDir: req.WorkDir, Env: req.Env,
		GPUs: req.GPUs, MIG: req.MIG, GPUMilli: int(req.Share*1000 + 0.5),
		CPUMilli: int64(req.CPU * 1000), MemoryMiB: req.MemoryMiB, Tasks: max(req.Tasks, 1),
		TimeLimit: d.Time, Priority: req.Priority, Queue: req.Queue,
		CheckpointEvery: d.CheckpointEvery, Grace: d.Grace, Requeue: req.Requeue, Image: req.Image,
		TasksGiven: req.Tasks > 0, Script: req.Script, KillOnInvalidDep: req.KillOnInvalidDep,
		Output: req.Output, Error: req.Error, Append: req.OpenMode == "append", SubmitDir: req.SubmitDir,
	}
	if err := s.batchFields(req, &spec); err != nil {
		return store.Spec{}, &httpError{http.StatusBadRequest, err}
	}
	if spec.Image != "" && s.cfg.ContainerRuntime == "" {
		return store.Spec{}, fmt.Errorf("image %q: this server runs no containers (start it with --container-runtime docker or podman)", spec.Image)
	}
	if req.Share > 0 && spec.GPUMilli == 0 {
		spec.GPUMilli = 1
	}
	if spec.GPUMilli >= 1000 {
		spec.GPUMilli = 999
	}
	if spec.Grace == 0 {
		spec.Grace = 10 * time.Second
	}
	if err := s.chooseShape(req, &spec); err != nil {
		return store.Spec{}, err
	}
	if err := s.fitsMachine(spec); err != nil {
		return store.Spec{}, err
	}
	return spec, nil
}

// chooseShape lets the core pick the model and the count for a job that
// asks by GPU memory (gang.State.Resolve on the machine's fleet) and
// records them in spec: its GPUs per task, its tasks, the model.
func (s *Server) chooseShape(req api.JobRequest, spec *store.Spec) error {
	if req.GPUMemoryMiB == 0 {
		return nil
	}
	spec.GPUMemoryMiB, spec.GPUMemoryPerGPUMiB, spec.GPUModels = req.GPUMemoryMiB, req.GPUMemoryPerGPUMiB, req.GPUModels
	empty, err := gang.New(cloneFleet(s.full))
	if err != nil {
		return err
	}
	asked := gangJob(&store.Job{ID: 1, Spec: *spec})
	r, err := empty.Resolve(asked)
	if err != nil {
		return fmt.Errorf("this machine (%d x %s) can never run it: %w", len(s.gpus), s.model.Name, err)
	}
	spec.GPUs, spec.Tasks, spec.ChosenModel = r.Shape.GPUsPerTask, r.Shape.Tasks, r.Shape.Model
	return nil
}

// batchFields reads what came from sbatch and needs more than checking:
// the begin time (by the server's clock), the umask, the signal.
func (s *Server) batchFields(req api.JobRequest, spec *store.Spec) error {
	var err error
	if req.Begin != "" {
		if spec.Begin, err = slurmfmt.ParseBegin(req.Begin, s.now()); err != nil {
			return fmt.Errorf("begin %q: %w", req.Begin, err)
		}
		spec.Begin = spec.Begin.UTC()
	}
	if spec.Umask, err = api.ParseUmask(req.Umask); err != nil {
		return fmt.Errorf("umask: %w", err)
	}
	if req.Signal != "" {
		sig, err := slurmfmt.ParseSignal(req.Signal)
		if err != nil {
			return fmt.Errorf("signal: %w", err)
		}
		spec.Signal, spec.SignalBefore, spec.SignalMainOnly = sig.Name, sig.Before, sig.MainOnly
	}
	return nil
}

// fitsMachine rejects work that could never run here: first against the
// machine's size, naming the limit, then against the empty machine as the
// core sees it.
func (s *Server) fitsMachine(spec store.Spec) error {
	if err := s.withinNode(spec); err != nil {
		return fmt.Errorf("this machine (%d x %s) can never run it: %w", len(s.gpus), s.model.Name, err)
	}
	empty, err := gang.New(cloneFleet(s.full))
	if err != nil {
		return err
	}
	j := store.Job{ID: 1, Spec: spec}
	if reasons := empty.Explain(gangJob(&j)).Lines(); len(reasons) > 0 {
		return fmt.Errorf("this machine (%d x %s) can never run it, even empty: %s", len(s.gpus), s.model.Name, reasons[0])
	}
	return nil
}

// withinNode checks the job's total demand (every task runs on this one
// machine) against the largest node: its GPUs, CPUs and memory.
func (s *Server) withinNode(spec store.Spec) error {
	n := s.full.Nodes[0]
	tasks := int64(max(spec.Tasks, 1))
	per := func(v string) string {
		if tasks == 1 {
			return v
		}
		return fmt.Sprintf("%s per task x %d tasks", v, tasks)
	}
	switch {
	case spec.GPUs > 0 && int64(spec.GPUs)*tasks > int64(n.GPUs):
		return fmt.Errorf("gpus: %s; the largest node has %d GPUs", per(fmt.Sprint(spec.GPUs)), n.GPUs)
	case spec.CPUMilli*tasks > n.CPUMilli:
		return fmt.Errorf("cpu: %s; the largest node has %s CPU cores", per(fmt.Sprint(float64(spec.CPUMilli)/1000)), fmt.Sprint(float64(n.CPUMilli)/1000))
	case spec.MemoryMiB*tasks > n.MemoryMiB:
		return fmt.Errorf("memory: %s; the largest node has %s", per(mibString(spec.MemoryMiB)), mibString(n.MemoryMiB))
	}
	return nil
}

// mibString writes a memory size with the largest binary unit that keeps
// it whole.
func mibString(mib int64) string {
	switch {
	case mib >= 1<<20 && mib%(1<<20) == 0:
		return fmt.Sprintf("%d TiB", mib>>20)
	case mib >= 1<<10 && mib%(1<<10) == 0:
		return fmt.Sprintf("%d GiB", mib>>10)
	}
	return fmt.Sprintf("%d MiB", mib)
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	f := store.Filter{Tenant: who.Name}
	q := r.URL.Query()
	if who.Admin {
		f.Tenant = q.Get("tenant")
	}
	for _, st := range q["state"] {
		if !knownState(st) {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("state %q: want one of %v", st, store.States))
			return
		}
		f.States = append(f.States, store.State(st))
	}
	jobs, err := s.st.List(f)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := api.JobList{Jobs: make([]api.Job, 0, len(jobs))}
	s.mu.Lock()
	for i := range jobs {
		v := s.liveView(&jobs[i])
		v.Request.Env, v.Request.Script = nil, "" // the list leaves them out; GET /v1/jobs/{id} has them
		out.Jobs = append(out.Jobs, v)
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func knownState(st string) bool {
	for _, k := range store.States {
		if string(k) == st {
			return true
		}
	}
	return false
}

// jobFor reads the job named in the path; a tenant sees only its own
// jobs, and another's is answered like a missing one.
func (s *Server) jobFor(w http.ResponseWriter, r *http.Request, who store.Tenant) (store.Job, bool) {
	if ref := r.PathValue("id"); strings.Contains(ref, "_") { // an array's task: j000017_3
		jobs, err := s.resolveText(ref, who)
		if err != nil {
			writeError(w, http.StatusNotFound, err.Error())
			return store.Job{}, false
		}
		return jobs[0], true
	}
	id, err := store.ParseID(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return store.Job{}, false
	}
	j, err := s.st.Get(id)
	if err != nil || (!who.Admin && j.Tenant != who.Name) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no job %s", store.FormatID(id)))
		return store.Job{}, false
	}
	return j, true
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	if j, ok := s.jobFor(w, r, who); ok {
		s.mu.Lock()
		v := s.liveView(&j)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, v)
	}
}

// liveView is view with why a waiting job waits: the rules' verdict
// when they keep it out of the cycle, else what the last cycle said.
// The caller holds s.mu.
func (s *Server) liveView(j *store.Job) api.Job {
	if u := s.unsaved[j.ID]; u != nil {
		j = &u.job // ended; the store has it running until it can write
	}
	v := view(j)
	if !j.State.Waiting() {
		return v
	}
	if code, text := s.blockedReason(j.ID); code != "" {
		v.PendingReason, v.Reason = code, text
		return v
	}
	last := s.waits[j.ID]
	if v.Reason == "" {
		v.Reason = last.reason()
	}
	v.PendingReason = last.code()
	return v
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	j, ok := s.jobFor(w, r, who)
	if !ok {
		return
	}
	j, err := s.Cancel(j.ID)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, errFinal) {
			code = http.StatusConflict
		}
		writeError(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, view(&j))
}

var errFinal = errors.New("job has already ended")

// Cancel cancels a waiting job at once, or stops a running one; the job
// as it is now is returned.
func (s *Server) Cancel(id uint64) (store.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.runs[id]; r != nil {
		if r.job.Stopping != store.StopCancel {
			s.stopRuns([]*run{r}, store.StopCancel)
		}
		j := r.job
		j.Tasks = slices.Clone(j.Tasks)
		return j, nil
	}
	if u := s.unsaved[id]; u != nil {
		return u.job, fmt.Errorf("cancel %s: %w (%s)", u.job.Name(), errFinal, u.job.State)
	}
	j, err := s.st.UpdateJob(id, func(j *store.Job) error {
		if !j.State.Waiting() {
			return fmt.Errorf("cancel %s: %w (%s)", j.Name(), errFinal, j.State)
		}
		j.State, j.Reason, j.Ended = store.Cancelled, "cancelled", s.now().UTC()
		return nil
	})
	if err != nil {
		return j, err
	}
	s.forgetWaiting(id)
	s.metrics.ended.WithLabelValues(string(store.Cancelled)).Inc()
	return j, nil
}

// forgetWaiting takes a cancelled waiting job out of the scheduler's
// queue: what Cancel and CancelMany both do. The caller holds s.mu.
func (s *Server) forgetWaiting(id uint64) {
	delete(s.waiting, id)
	delete(s.waits, id)
	delete(s.blocked, id)
}

func (s *Server) handleExplain(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	j, ok := s.jobFor(w, r, who)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, s.Explain(j))
}

// Explain says why j waits, with the core's reasons and an estimated
// start.
func (s *Server) Explain(j store.Job) api.Explain {
	out := api.Explain{ID: j.Name(), State: string(j.State)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admitSubmitted()
	w, waiting := s.waiting[j.ID]
	if !waiting {
		out.Summary = fmt.Sprintf("not waiting: %s", j.State)
		if j.Reason != "" {
			out.Summary += " (" + j.Reason + ")"
		}
		return out
	}
	if _, text := s.blockedReason(j.ID); text != "" {
		out.Summary = text
		return out
	}
	last := s.waits[j.ID]
	out.Summary = last.reason()
	if out.Summary == "" {
		out.Summary = "not considered yet; the next scheduling cycle will"
	}
	if w.Reason != "" {
		out.Reasons = append(out.Reasons, "last run: "+w.Reason)
	}
	unfit := s.state.Explain(gangJob(&w))
	out.Reasons = append(out.Reasons, unfit.Lines()...)
	out.Filtered = filteredView(unfit)
	if last.ahead > 0 {
		out.Reasons = append(out.Reasons, fmt.Sprintf("%d waiting jobs come before it in the scheduler's order (tenants by fair share, then priority, then age)", last.ahead))
	}
	if at := last.Estimate; !at.IsZero() {
		out.EstimatedStart = &at
		if !last.Held && last.ahead > 0 {
			out.Reasons = append(out.Reasons, "the estimated start assumes the jobs before it take none of the room it needs")
		}
	}
	return out
}

// filteredView is the core's node counts of unfit as the API shows
// them: by reason code, most nodes first.
func filteredView(unfit *gang.Unfit) []api.NodeCount {
	var out []api.NodeCount
	for _, c := range unfit.Filtered() {
		out = append(out, api.NodeCount{Reason: c.Reason.Code(), Detail: c.Detail, Nodes: c.Nodes})
	}
	return out
}

// view is a job as the API shows it.
func view(j *store.Job) api.Job {
	v := api.Job{
		ID: j.Name(), Tenant: j.Tenant, State: string(j.State), Reason: j.Reason, Stopping: j.Stopping,
		Request: request(j.Spec), GPUModel: j.GPUModel, Attempts: j.Attempts,
		Submitted: j.Submitted, ExitCode: j.ExitCode, SlurmState: store.SlurmState(j.State, j.Outcome),
		Adjusted: j.Spec.Adjusted, Held: j.Held,
	}
	if j.ArrayJob != 0 {
		idx := j.ArrayIndex
		v.ArrayJob, v.ArrayIndex, v.ArrayID = store.FormatID(j.ArrayJob), &idx, j.ArrayName()
		if j.Array != nil {
			v.Request.Array = arrayText(j.Array)
		}
	}
	if !j.Started.IsZero() {
		t := j.Started
		v.Started = &t
	}
	if !j.Ended.IsZero() {
		t := j.Ended
		v.Ended = &t
	}
	for _, t := range j.Tasks {
		v.Tasks = append(v.Tasks, api.Task{Rank: t.Rank, GPUs: t.GPUs, MIG: t.MIG, Share: t.Milli, PID: t.PID, ExitCode: t.ExitCode, Signal: t.Signal})
	}
	return v
}

func request(s store.Spec) api.JobRequest {
	r := api.JobRequest{
		Name: s.Name, Command: s.Command, WorkDir: s.WorkDir, Env: s.Env, GPUs: s.GPUs, MIG: s.MIG,
		Share: float64(s.GPUMilli) / 1000, CPU: float64(s.CPUMilli) / 1000, MemoryMiB: s.MemoryMiB,
		Tasks: s.Tasks, Priority: s.Priority, Queue: s.Queue, Requeue: s.Requeue,
		Script: s.Script, Dependency: s.Dependency.String(store.FormatID), KillOnInvalidDep: s.KillOnInvalidDep,
		Output: s.Output, Error: s.Error, SubmitDir: s.SubmitDir,
		GPUMemoryMiB: s.GPUMemoryMiB, GPUMemoryPerGPUMiB: s.GPUMemoryPerGPUMiB, GPUModels: s.GPUModels,
	}
	if shape := chosenShape(s); shape != nil {
		r.Chosen = shape.String() + " for " + job.FormatMiB(s.GPUMemoryMiB)
	}
	if !s.Begin.IsZero() {
		r.Begin = s.Begin.Format(time.RFC3339)
	}
	if s.Append {
		r.OpenMode = "append"
	}
	if s.Umask != nil {
		r.Umask = fmt.Sprintf("%04o", *s.Umask)
	}
	if s.Signal != "" {
		r.Signal = fmt.Sprintf("%s@%d", strings.TrimPrefix(s.Signal, "SIG"), int(s.SignalBefore.Seconds()))
		if s.SignalMainOnly {
			r.Signal = "B:" + r.Signal
		}
	}
	for _, d := range []struct {
		v  time.Duration
		to *string
	}{{s.TimeLimit, &r.Time}, {s.CheckpointEvery, &r.CheckpointEvery}, {s.Grace, &r.Grace}} {
		if d.v > 0 {
			*d.to = d.v.String()
		}
	}
	return r
}

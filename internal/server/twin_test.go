package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
	"github.com/corral-sched/corral/internal/twin"
)

// TestTwinServer holds corral server to the core's transcripts: the same
// scripted workload, run with real processes on declared GPUs, starts and
// preempts the same jobs at the same steps.
func TestTwinServer(t *testing.T) {
	for _, path := range twin.Scripts(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s := twin.Load(t, path)
			got, err := twin.Run(&serverFace{t: t, done: t.TempDir()}, s)
			if errors.Is(err, twin.ErrOneMachine) || errors.Is(err, twin.ErrNoResize) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			twin.Compare(t, got, s.Want)
		})
	}
}

// serverFace is the server as a twin.Face. The submissions and ends of a
// step happen at its settle, while the scheduling loop is held, so that,
// as in the core, the next cycle sees all of a step at once.
type serverFace struct {
	t        *testing.T
	h        *harness
	cfg      Config // the server's, to start another on its store
	done     string // a job's command ends when a file of its name appears here
	tenants  map[string]*client.Client
	names    map[string]string // job ID -> twin name
	ids      map[string]uint64 // twin name -> job ID
	attempts map[string]int    // job ID -> attempts seen at the last settle
	records  map[string]bool   // accounting records seen: job/attempt
	// submitting and finishing are the jobs to submit and to end at the
	// next settle.
	submitting []twin.Job
	finishing  []string
	// down: the machine's GPUs all report a fault; checked is whether
	// the server has been told since it changed.
	down, checked bool
}

// Fleet starts a server on declared GPUs of the script's model and mode,
// whose health check reports every GPU faulty while the machine is down.
// Borrowers are stopped at once, as the twin's core does.
func (f *serverFace) Fleet(tf twin.Fleet) error {
	if len(tf.NodeNames()) > 1 {
		return twin.ErrOneMachine
	}
	gpus := fakeGPUs(tf.GPUs)
	for i := range gpus {
		gpus[i].Model, gpus[i].MIG = cmp.Or(tf.Model, twin.DefaultModel), tf.MIG
	}
	dir := f.t.TempDir()
	st, err := store.Open(filepath.Join(dir, "corral.db"))
	if err != nil {
		return err
	}
	f.cfg = Config{Store: st, GPUs: gpus, TimeSlices: max(tf.Slices, 1), StateDir: filepath.Join(dir, "tasks"),
		Interval: 100 * time.Millisecond, ReclaimPatience: -1, Health: f.health, HealthInterval: time.Hour}
	srv, err := New(f.cfg)
	if err != nil {
		return err
	}
	f.h = startHarness(f.t, srv, f.cfg.Store)
	f.tenants, f.names, f.ids = map[string]*client.Client{}, map[string]string{}, map[string]uint64{}
	f.attempts, f.records = map[string]int{}, map[string]bool{}
	return nil
}

// health is the machine's GPU health as the server polls it.
func (f *serverFace) health() (map[int][]string, error) {
	bad := map[int][]string{}
	if f.down {
		for _, g := range f.h.srv.gpus {
			bad[g.Index] = []string{"the machine left"}
		}
	}
	return bad, nil
}

func (f *serverFace) Tenant(t twin.Tenant) error {
	ctx := context.Background()
	if _, err := f.h.admin.CreateTenant(ctx, api.TenantRequest{Name: t.Name, QuotaGPUs: float64(t.Quota), Cohort: t.Cohort}); err != nil {
		return err
	}
	tok, err := f.h.admin.IssueToken(ctx, t.Name)
	if err != nil {
		return err
	}
	f.tenants[t.Name] = &client.Client{Server: f.h.url, Token: tok.Token}
	return nil
}

// Down and Up change what the health check reports; the server is told
// at the next settle. The one machine is the script's only node.
func (f *serverFace) Down(string) error {
	f.down, f.checked = true, false
	return nil
}

func (f *serverFace) Up(string) error {
	f.down, f.checked = false, false
	return nil
}

// Restart crashes the server, its jobs running on, and starts another on
// its store, which adopts them and decides from what the store kept.
func (f *serverFace) Restart() error {
	f.h.crash()
	srv, err := New(f.cfg)
	if err != nil {
		return err
	}
	f.h = startHarness(f.t, srv, f.cfg.Store)
	for _, c := range f.tenants {
		c.Server = f.h.url
	}
	f.checked = false // the new server is told what the health check says
	return nil
}

// Submit keeps a job to submit at the next settle, with the step's other
// submissions and ends, so that the loop sees the step whole.
// Submit keeps j for the next settle. An elastic job is refused: a
// running job's task count is fixed when its processes start.
func (f *serverFace) Submit(j twin.Job) error {
	if j.Elastic() {
		return twin.ErrNoResize
	}
	f.submitting = append(f.submitting, j)
	return nil
}

// submitAll submits the kept jobs while the loop is held. The caller
// holds the loop.
func (f *serverFace) submitAll() error {
	for _, j := range f.submitting {
		spec := store.Spec{Name: j.Name, GPUs: j.GPUs, GPUMilli: j.Share, MIG: j.MIG, Tasks: max(j.Tasks, 1), Priority: j.Priority, Grace: 10 * time.Second,
			Command: []string{"sh", "-c", fmt.Sprintf("while [ ! -f %s ]; do sleep 0.05; done", filepath.Join(f.done, j.Name))}}
		job, err := f.h.st.Submit(j.Tenant, spec, time.Now())
		if err != nil {
			return err
		}
		f.h.srv.enqueue(job.ID)
		f.names[job.Name()], f.ids[j.Name] = j.Name, job.ID
	}
	f.submitting = nil
	return nil
}

// Finish marks a job to end at the next settle, so that, as in the core,
// every end of a step reaches the scheduling loop at once.
func (f *serverFace) Finish(name string) error {
	f.finishing = append(f.finishing, name)
	return nil
}

// step applies the kept submissions and ends while the loop is held, so
// that it takes the ends together (the first, then the rest that wait in
// its channel) and decides once on the whole step.
func (f *serverFace) step() error {
	if !f.checked {
		f.h.srv.checkHealth() // drains, or takes the GPUs back
		f.checked = true
	}
	f.h.srv.mu.Lock()
	defer f.h.srv.mu.Unlock()
	if err := f.submitAll(); err != nil {
		return err
	}
	for _, name := range f.finishing {
		r := f.h.srv.runs[f.ids[name]]
		if r == nil {
			return fmt.Errorf("%s is not running", name)
		}
		if err := os.WriteFile(filepath.Join(f.done, name), nil, 0o644); err != nil {
			return err
		}
		for _, task := range r.tasks {
			<-task.Done()
		}
	}
	if len(f.finishing) > 0 {
		time.Sleep(100 * time.Millisecond) // the watchers hand the ends to the loop
	}
	f.finishing = nil
	return nil
}

func (f *serverFace) Settle() (started, preempted, waiting []string, err error) {
	if err := f.step(); err != nil {
		return nil, nil, nil, err
	}
	jobs, err := f.quiet()
	if err != nil {
		return nil, nil, nil, err
	}
	for _, j := range jobs {
		for range j.Attempts - f.attempts[j.ID] {
			started = append(started, f.names[j.ID])
		}
		f.attempts[j.ID] = j.Attempts
		if j.State == string(store.Pending) || j.State == string(store.Preempted) {
			waiting = append(waiting, f.names[j.ID])
		}
	}
	acct, err := f.h.admin.Acct(context.Background(), nil)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, r := range acct.Records {
		key := fmt.Sprintf("%s/%d", r.Job, r.Attempt)
		if !f.records[key] && r.State == string(store.Preempted) {
			preempted = append(preempted, f.names[r.Job])
		}
		f.records[key] = true
	}
	return started, preempted, waiting, nil
}

// quiet waits until the jobs stop changing, none is stopping and a cycle
// has looked at every waiting one, and returns them.
func (f *serverFace) quiet() ([]api.Job, error) {
	var last string
	stable := 0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		jobs, err := f.h.admin.Jobs(context.Background(), nil)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		stopping := false
		for _, j := range jobs {
			fmt.Fprintf(&b, "%s %s %d;", j.ID, j.State, j.Attempts)
			unseen := j.State == string(store.Pending) && j.Reason == "" // no cycle has looked at it yet
			stopping = stopping || j.Stopping != "" || unseen
		}
		if b.String() == last && !stopping {
			stable++
		} else {
			stable = 0
		}
		if stable == 5 {
			return jobs, nil
		}
		last = b.String()
	}
	return nil, fmt.Errorf("the server did not settle in 30 s")
}

package server

import (
	"context"
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
			if err != nil {
				t.Fatal(err)
			}
			twin.Compare(t, got, s.Want)
		})
	}
}

// serverFace is the server as a twin.Face. Steps that change the world
// (submissions, ends) happen while the scheduling loop is held, so that,
// as in the core, the next cycle sees all of a step at once.
type serverFace struct {
	t        *testing.T
	h        *harness
	done     string // a job's command ends when a file of its name appears here
	tenants  map[string]*client.Client
	names    map[string]string // job ID -> twin name
	ids      map[string]uint64 // twin name -> job ID
	attempts map[string]int    // job ID -> attempts seen at the last settle
	records  map[string]bool   // accounting records seen: job/attempt
}

func (f *serverFace) Fleet(gpus int) error {
	f.h = newHarness(f.t, gpus)
	f.tenants, f.names, f.ids = map[string]*client.Client{}, map[string]string{}, map[string]uint64{}
	f.attempts, f.records = map[string]int{}, map[string]bool{}
	return nil
}

func (f *serverFace) Tenant(name string, quota int) error {
	f.tenants[name] = f.h.tenant(name, float64(quota))
	return nil
}

func (f *serverFace) Submit(j twin.Job) error {
	spec := store.Spec{Name: j.Name, GPUs: j.GPUs, Tasks: max(j.Tasks, 1), Priority: j.Priority, Grace: 10 * time.Second,
		Command: []string{"sh", "-c", fmt.Sprintf("while [ ! -f %s ]; do sleep 0.05; done", filepath.Join(f.done, j.Name))}}
	f.h.srv.mu.Lock() // no cycle until the step is whole
	defer f.h.srv.mu.Unlock()
	job, err := f.h.st.Submit(j.Tenant, spec, time.Now())
	if err != nil {
		return err
	}
	f.h.srv.enqueue(job.ID)
	f.names[job.Name()], f.ids[j.Name] = j.Name, job.ID
	return nil
}

// Finish ends a job's processes while the loop is held, then lets the
// loop take every end in one cycle.
func (f *serverFace) Finish(name string) error {
	f.h.srv.mu.Lock()
	r := f.h.srv.runs[f.ids[name]]
	if r == nil {
		f.h.srv.mu.Unlock()
		return fmt.Errorf("%s is not running", name)
	}
	if err := os.WriteFile(filepath.Join(f.done, name), nil, 0o644); err != nil {
		f.h.srv.mu.Unlock()
		return err
	}
	for _, task := range r.tasks {
		<-task.Done()
	}
	time.Sleep(50 * time.Millisecond) // the watcher hands the end to the loop
	f.h.srv.mu.Unlock()
	return nil
}

func (f *serverFace) Settle() (started, preempted, waiting []string, err error) {
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

// quiet waits until the jobs stop changing and none is stopping, and
// returns them.
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
			stopping = stopping || j.Stopping != ""
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

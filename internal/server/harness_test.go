package server

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

// harness is a real server (store in a temp dir, real processes) behind a
// real HTTP listener on a loopback port, and an admin client.
type harness struct {
	t     *testing.T
	srv   *Server
	st    *store.Store
	url   string
	admin *client.Client
	// stop stops the server at once, as the test's end does, closing its
	// store or leaving it open for another server.
	stop func(closeStore bool)
	// crash stops the server as kill -9 would, as far as its tasks are
	// concerned: they go on running, for the next server on the store to
	// adopt. The store stays open.
	crash func()
}

func fakeGPUs(n int) []GPU {
	gpus := make([]GPU, n)
	for i := range gpus {
		gpus[i] = GPU{Index: i, UUID: "GPU-fake-" + string(rune('a'+i)), Model: "H100-80GB", MemoryMiB: 81920}
	}
	return gpus
}

// tempStore opens a store in a new temporary directory, which it returns.
func tempStore(t testing.TB) (string, *store.Store) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "corral.db"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, st
}

func newHarness(t *testing.T, gpus int) *harness {
	t.Helper()
	dir, st := tempStore(t)
	srv, err := New(Config{Store: st, GPUs: fakeGPUs(gpus), StateDir: filepath.Join(dir, "tasks"), Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return startHarness(t, srv, st)
}

// startHarness runs srv and serves its API on a loopback port.
func startHarness(t *testing.T, srv *Server, st *store.Store) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	go srv.Run(ctx)
	ts := httptest.NewServer(srv.Handler())
	tok, err := srv.Bootstrap("admin")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, srv: srv, st: st, url: ts.URL, admin: &client.Client{Server: ts.URL, Token: tok}}
	var once sync.Once
	h.stop = func(closeStore bool) {
		once.Do(func() {
			// Stop scheduling first: killing the tasks frees GPUs, and a cycle
			// still running would start waiting jobs into the removed TempDir.
			cancel()
			srv.Close()
			srv.Wait()
			h.killAll()
			ts.Close()
			if closeStore {
				st.Close()
			}
			removeSettled(srv.cfg.StateDir)
		})
	}
	h.crash = func() {
		once.Do(func() {
			cancel()
			srv.Close()
			srv.Wait()
			ts.Close()
		})
	}
	t.Cleanup(func() { h.stop(true) })
	return h
}

// removeSettled removes the tasks' directory before the test's TempDir
// goes, trying again for a while: a killed task's processes may still be
// writing into it as they die, and TempDir's own removal then fails the
// test for a file that appeared while it ran.
func removeSettled(dir string) {
	if dir == "" {
		return
	}
	for deadline := time.Now().Add(5 * time.Second); os.RemoveAll(dir) != nil && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
}

// killAll stops every running task at once, so that none outlives the test.
func (h *harness) killAll() {
	h.srv.mu.Lock()
	var tasks []interface{ Done() <-chan struct{} }
	for _, r := range h.srv.runs {
		for _, t := range r.tasks {
			t.Stop(0)
			tasks = append(tasks, t)
		}
	}
	h.srv.mu.Unlock()
	for _, t := range tasks {
		select {
		case <-t.Done():
		case <-time.After(10 * time.Second):
		}
	}
}

// tenant creates a tenant with a GPU quota (0: none) and returns its client.
func (h *harness) tenant(name string, quota float64) *client.Client {
	h.t.Helper()
	ctx := context.Background()
	if _, err := h.admin.CreateTenant(ctx, api.TenantRequest{Name: name, QuotaGPUs: quota}); err != nil {
		h.t.Fatal(err)
	}
	tok, err := h.admin.IssueToken(ctx, name)
	if err != nil {
		h.t.Fatal(err)
	}
	return &client.Client{Server: h.url, Token: tok.Token}
}

// allowPriority lets the tenant's jobs ask for priorities up to most.
func (h *harness) allowPriority(name string, most int) {
	h.t.Helper()
	if _, err := h.admin.UpdateTenant(context.Background(), name, api.TenantUpdate{MaxPriority: &most}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) submit(c *client.Client, r api.JobRequest) api.Job {
	h.t.Helper()
	j, err := c.Submit(context.Background(), r)
	if err != nil {
		h.t.Fatalf("submit %v: %v", r.Command, err)
	}
	return j
}

// wait polls job id until cond holds, or fails the test after timeout.
func (h *harness) wait(c *client.Client, id string, timeout time.Duration, what string, cond func(api.Job) bool) api.Job {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		j, err := c.Job(context.Background(), id)
		if err != nil {
			h.t.Fatal(err)
		}
		if cond(j) {
			return j
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("job %s: not %s after %v; it is %s (%s)", id, what, timeout, j.State, j.Reason)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *harness) waitState(c *client.Client, id string, state store.State, timeout time.Duration) api.Job {
	h.t.Helper()
	return h.wait(c, id, timeout, string(state), func(j api.Job) bool { return j.State == string(state) })
}

func (h *harness) logs(c *client.Client, id string, rank int) string {
	h.t.Helper()
	var b strings.Builder
	if err := c.Logs(context.Background(), id, rank, "", false, &b); err != nil {
		h.t.Fatalf("logs of %s rank %d: %v", id, rank, err)
	}
	return b.String()
}

func sh(script string) []string { return []string{"sh", "-c", script} }

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

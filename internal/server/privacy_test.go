package server

import (
	"context"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// TestGPUsHideOtherTenantsJobs: a tenant that is not an admin sees that a
// GPU is taken by another tenant's job, and how much of it, but not the
// job or the tenant; its own jobs and an admin's view are whole.
func TestGPUsHideOtherTenantsJobs(t *testing.T) {
	h := newHarness(t, 2)
	alice, bob := h.tenant("alice", 0), h.tenant("bob", 0)
	a := h.submit(alice, api.JobRequest{GPUs: 1, Command: sh("sleep 60")})
	b := h.submit(bob, api.JobRequest{GPUs: 1, Command: sh("sleep 60")})
	h.waitState(alice, a.ID, store.Running, 20*time.Second)
	h.waitState(bob, b.ID, store.Running, 20*time.Second)
	uses := func(c interface {
		GPUs(context.Context) ([]api.GPU, error)
	}) map[string]api.Use {
		gpus, err := c.GPUs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]api.Use{}
		for _, g := range gpus {
			for _, u := range g.Jobs {
				key := u.Job
				if u.Other {
					key = "other"
				}
				out[key] = u
			}
		}
		return out
	}
	seen := uses(bob)
	if _, ok := seen[a.ID]; ok || seen["other"].Tenant != "" || seen["other"].Share != 1 {
		t.Fatalf("bob sees %+v: want alice's job as another tenant's, unnamed", seen)
	}
	if u := seen[b.ID]; u.Tenant != "bob" || u.Other {
		t.Fatalf("bob's own job: %+v", u)
	}
	if all := uses(h.admin); all[a.ID].Tenant != "alice" || all[b.ID].Tenant != "bob" || len(all) != 2 {
		t.Fatalf("admin sees %+v: want both jobs named", all)
	}
}

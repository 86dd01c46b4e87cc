package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

// A rotated token is refused at once (401); the tenant's tokens are
// listed with when they were made and used; every admin action is in
// the audit log.
func TestTokenRotationRevokesTheOldTokenAtOnce(t *testing.T) {
	h := newHarness(t, 1)
	ctx := context.Background()
	old := h.tenant("team", 0)
	if _, err := old.Whoami(ctx); err != nil {
		t.Fatal(err)
	}
	tok, err := h.admin.IssueToken(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Whoami(ctx); !isStatus(err, http.StatusUnauthorized) {
		t.Errorf("the old token after a rotation: %v, want 401", err)
	}
	fresh := &client.Client{Server: h.url, Token: tok.Token}
	if w, err := fresh.Whoami(ctx); err != nil || w.Tenant != "team" {
		t.Errorf("the new token: %+v, %v", w, err)
	}
	if _, err := h.admin.AddToken(ctx, "team"); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Whoami(ctx); err != nil {
		t.Errorf("a token added with keep: the other one is refused: %v", err)
	}
	l, err := h.admin.Tokens(ctx, "team")
	if err != nil || len(l.Tokens) != 2 || l.Tokens[0].Created == nil || l.Tokens[0].LastUsed == nil || l.Tokens[1].LastUsed != nil {
		t.Errorf("tokens: %+v, %v; want two, the first used", l, err)
	}
	log, err := h.admin.Audit(ctx)
	var actions []string
	for _, e := range log {
		if e.Actor == "admin" && e.Target == "team" {
			actions = append(actions, e.Action)
		}
	}
	if err != nil || strings.Join(actions, ",") != "tenant create,token rotate,token rotate,token add" {
		t.Errorf("audit log: %v, %v", actions, err)
	}
}

// A tenant is deleted only once its jobs have ended, unless the admin
// drains it; its tokens go with it.
func TestDeleteTenant(t *testing.T) {
	h := newHarness(t, 1)
	ctx := context.Background()
	c := h.tenant("leaving", 0)
	j := h.submit(c, api.JobRequest{Command: []string{"sleep", "60"}})
	h.waitState(c, j.ID, store.Running, 20*time.Second)
	if _, err := h.admin.DeleteTenant(ctx, "leaving", false); !isStatus(err, http.StatusConflict) || !strings.Contains(err.Error(), "drain") {
		t.Errorf("deleting a tenant whose job runs: %v, want 409 naming drain", err)
	}
	d, err := h.admin.DeleteTenant(ctx, "leaving", true)
	if err != nil || len(d.Cancelled) != 1 || d.Cancelled[0] != j.ID {
		t.Fatalf("drain: %+v, %v", d, err)
	}
	if _, err := c.Whoami(ctx); !isStatus(err, http.StatusUnauthorized) {
		t.Errorf("a deleted tenant's token: %v, want 401", err)
	}
	h.wait(h.admin, j.ID, 20*time.Second, "cancelled", func(j api.Job) bool { return j.State == string(store.Cancelled) })
	if _, err := h.admin.DeleteTenant(ctx, "leaving", false); !isStatus(err, http.StatusNotFound) {
		t.Errorf("deleting it again: %v, want 404", err)
	}
}

// Quotas that sum above the machine's GPUs are refused unless the admin
// insists, saying so; so is a Unix user another tenant runs as.
func TestTenantConflictsNeedForce(t *testing.T) {
	h := newHarness(t, 8)
	ctx := context.Background()
	if _, err := h.admin.CreateTenant(ctx, api.TenantRequest{Name: "a", QuotaGPUs: 6}); err != nil {
		t.Fatal(err)
	}
	req := api.TenantRequest{Name: "b", QuotaGPUs: 4}
	if _, err := h.admin.CreateTenant(ctx, req); !isStatus(err, http.StatusConflict) || !strings.Contains(err.Error(), "sum to 10") {
		t.Errorf("quotas of 6 and 4 on 8 GPUs: %v, want 409 saying they sum to 10", err)
	}
	if _, err := h.admin.CreateTenantForce(ctx, req, true); err != nil {
		t.Errorf("with force: %v", err)
	}
	u := "nobody"
	if _, err := h.admin.CreateTenant(ctx, api.TenantRequest{Name: "n1", UnixUser: u}); err != nil {
		t.Fatal(err)
	}
	two := 0.0
	if _, err := h.admin.CreateTenant(ctx, api.TenantRequest{Name: "n2", UnixUser: u}); !isStatus(err, http.StatusConflict) || !strings.Contains(err.Error(), "n1") {
		t.Errorf("a second tenant run as %s: %v, want 409 naming n1", u, err)
	}
	if _, err := h.admin.UpdateTenant(ctx, "b", api.TenantUpdate{QuotaGPUs: &two}); err != nil {
		t.Errorf("lowering a quota back within the machine: %v", err)
	}
}

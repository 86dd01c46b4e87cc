package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

func TestTenantSeesAndCancelsOnlyItsOwnJobs(t *testing.T) {
	h := newHarness(t, 2)
	alice, bob := h.tenant("alice", 0), h.tenant("bob", 0)
	aj := h.submit(alice, api.JobRequest{GPUs: 1, Command: []string{"sleep", "30"}})
	h.waitState(alice, aj.ID, store.Running, 20*time.Second)
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"get":     func() error { _, err := bob.Job(ctx, aj.ID); return err },
		"cancel":  func() error { _, err := bob.Cancel(ctx, aj.ID); return err },
		"logs":    func() error { return bob.Logs(ctx, aj.ID, 0, "", false, io.Discard) },
		"explain": func() error { _, err := bob.Explain(ctx, aj.ID); return err },
	} {
		if err := call(); !client.IsNotFound(err) {
			t.Errorf("bob %s of alice's job: %v, want 404", name, err)
		}
	}
	if jobs, err := bob.Jobs(ctx, nil); err != nil || len(jobs) != 0 {
		t.Errorf("bob lists %+v, %v: want nothing", jobs, err)
	}
	if _, err := bob.Tenants(ctx); err == nil {
		t.Error("a tenant listed the tenants")
	}
	if j, err := alice.Job(ctx, aj.ID); err != nil || j.State != "running" {
		t.Fatalf("alice's job after bob's attempts: %+v, %v", j, err)
	}
	if jobs, err := h.admin.Jobs(ctx, nil); err != nil || len(jobs) != 1 {
		t.Errorf("admin lists %d jobs, %v: want 1", len(jobs), err)
	}
	if _, err := alice.Cancel(ctx, aj.ID); err != nil {
		t.Fatal(err)
	}
	h.waitState(alice, aj.ID, store.Cancelled, 20*time.Second)
}

// TestHostileRequestsChangeNothing sends malformed, oversized and hostile
// requests; each gets a 4xx with a JSON error, and the store is byte for
// byte what it was.
func TestHostileRequestsChangeNothing(t *testing.T) {
	h := newHarness(t, 8)
	alice := h.tenant("alice", 0)
	existing := h.submit(alice, api.JobRequest{Command: []string{"true"}, GPUs: 1})
	h.waitState(alice, existing.ID, store.Succeeded, 20*time.Second)
	time.Sleep(200 * time.Millisecond)
	big := `{"command":["` + strings.Repeat("a", 2<<20) + `"]}`
	cases := []struct {
		name, method, path, token, body string
		want                            int
	}{
		{"no token", "POST", "/v1/jobs", "", `{"command":["true"]}`, 401},
		{"wrong token", "POST", "/v1/jobs", "crl_nope", `{"command":["true"]}`, 401},
		{"not bearer", "GET", "/v1/jobs", "Basic abc", "", 401},
		{"bad JSON", "POST", "/v1/jobs", "alice", `{"command":["true"`, 400},
		{"not an object", "POST", "/v1/jobs", "alice", `["true"]`, 400},
		{"two objects", "POST", "/v1/jobs", "alice", `{"command":["true"]}{"command":["true"]}`, 400},
		{"empty body", "POST", "/v1/jobs", "alice", ``, 400},
		{"unknown field", "POST", "/v1/jobs", "alice", `{"command":["true"],"gpu":1}`, 400},
		{"negative GPUs", "POST", "/v1/jobs", "alice", `{"command":["true"],"gpus":-1}`, 400},
		{"more GPUs than the machine", "POST", "/v1/jobs", "alice", `{"command":["true"],"gpus":9}`, 422},
		{"gang larger than the machine", "POST", "/v1/jobs", "alice", `{"command":["true"],"gpus":4,"tasks":3}`, 422},
		{"two kinds of GPU", "POST", "/v1/jobs", "alice", `{"command":["true"],"gpus":1,"share":0.5}`, 400},
		{"share of 1", "POST", "/v1/jobs", "alice", `{"command":["true"],"share":1}`, 400},
		{"no command", "POST", "/v1/jobs", "alice", `{"gpus":1}`, 400},
		{"path traversal in name", "POST", "/v1/jobs", "alice", `{"name":"../../etc/passwd","command":["true"]}`, 400},
		{"relative workdir", "POST", "/v1/jobs", "alice", `{"workdir":"../x","command":["true"]}`, 400},
		{"bad duration", "POST", "/v1/jobs", "alice", `{"time":"forever","command":["true"]}`, 400},
		{"bad env", "POST", "/v1/jobs", "alice", `{"env":["A B=1"],"command":["true"]}`, 400},
		{"wrong type", "POST", "/v1/jobs", "alice", `{"command":"true"}`, 400},
		{"share of 0", "POST", "/v1/jobs", "alice", `{"command":["true"],"share":0}`, 400},
		{"tasks 0", "POST", "/v1/jobs", "alice", `{"command":["true"],"tasks":0}`, 400},
		{"empty name", "POST", "/v1/jobs", "alice", `{"command":["true"],"name":""}`, 400},
		{"cancel selecting nothing", "POST", "/v1/jobs/cancel", "alice", `{}`, 400},
		{"cancel another tenant's jobs", "POST", "/v1/jobs/cancel", "alice", `{"tenant":"admin"}`, 403},
		{"cancel ended state", "POST", "/v1/jobs/cancel", "alice", `{"states":["succeeded"]}`, 400},
		{"cancel bad id", "POST", "/v1/jobs/cancel", "alice", `{"ids":["j1x"]}`, 400},
		{"2 MiB body", "POST", "/v1/jobs", "alice", big, 413},
		{"not JSON content", "POST", "/v1/jobs", "alice", `command=true`, 415},
		{"traversal in job id", "GET", "/v1/jobs/..%2F..%2Fetc/logs", "alice", "", 400},
		{"bad job id", "POST", "/v1/jobs/j12x/cancel", "alice", "", 400},
		{"missing job", "GET", "/v1/jobs/j999999", "alice", "", 404},
		{"bad state filter", "GET", "/v1/jobs?state=bogus", "alice", "", 400},
		{"bad rank", "GET", "/v1/jobs/" + existing.ID + "/logs?rank=-1", "alice", "", 400},
		{"bad acct time", "GET", "/v1/acct?since=yesterday", "alice", "", 400},
		{"tenant creates tenant", "POST", "/v1/tenants", "alice", `{"name":"mallory","admin":true}`, 403},
		{"tenant issues token", "POST", "/v1/tenants/alice/tokens", "alice", "", 403},
		{"bad tenant name", "POST", "/v1/tenants", "admin", `{"name":"../x"}`, 400},
		{"token for missing tenant", "POST", "/v1/tenants/nobody/tokens", "admin", "", 404},
		{"token for traversal name", "POST", "/v1/tenants/..%2Fx/tokens", "admin", "", 400},
		{"duplicate tenant", "POST", "/v1/tenants", "admin", `{"name":"alice"}`, 409},
		{"cohort without a quota", "POST", "/v1/tenants", "admin", `{"name":"bob","cohort":"lab"}`, 400},
		{"bad cohort name", "POST", "/v1/tenants", "admin", `{"name":"bob","quota_gpus":2,"cohort":"a b"}`, 400},
		{"cohort on an uncapped tenant", "PATCH", "/v1/tenants/alice", "admin", `{"cohort":"lab"}`, 400},
		{"cancel ended job", "POST", "/v1/jobs/" + existing.ID + "/cancel", "alice", "", 409},
	}
	before, err := h.st.Dump()
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{"alice": alice.Token, "admin": h.admin.Token}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, h.url+tc.path, bytes.NewBufferString(tc.body))
			switch tok := tokens[tc.token]; {
			case tok != "":
				req.Header.Set("Authorization", "Bearer "+tok)
			case strings.HasPrefix(tc.token, "Basic"):
				req.Header.Set("Authorization", tc.token)
			case tc.token != "":
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.body != "" && tc.name != "not JSON content" {
				req.Header.Set("Content-Type", "application/json")
			} else if tc.body != "" {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			if !strings.Contains(string(body), `"error"`) {
				t.Fatalf("body %s: want a JSON error", body)
			}
		})
	}
	after, err := h.st.Dump()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatalf("hostile requests changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

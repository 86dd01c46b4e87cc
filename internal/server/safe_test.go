package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

// post sends body to path with the Authorization header auth and returns
// the status and the body (the message, for an error).
func post(t *testing.T, url, path, auth, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e api.Error
	if resp.StatusCode >= 400 && json.Unmarshal(data, &e) == nil {
		return resp.StatusCode, e.Error
	}
	return resp.StatusCode, string(data)
}

func TestSubmitRefusesWhatTheSchemaForbidsNamingTheField(t *testing.T) {
	h := newHarness(t, 8)
	for _, tc := range []struct{ body, field string }{
		{`{"command":["true"],"share":0}`, "share 0"},
		{`{"command":["true"],"tasks":0}`, "tasks 0"},
		{`{"command":["true"],"tasks":65}`, "tasks 65"},
		{`{"command":["true"],"name":""}`, `name ""`},
		{`{"command":["true"],"queue":""}`, `queue ""`},
		{`{"command":["true"],"mig":""}`, `mig ""`},
		{`{"command":["true"],"workdir":""}`, `workdir ""`},
		{`{"command":["true"],"share":1.5}`, "share 1.5"},
		{`{"command":["true"],"gpus":-1}`, "gpus -1"},
		{`{"command":["true"],"cpu":-1}`, "cpu -1"},
		{`{"command":["true"],"priority":2000000}`, "priority 2000000"},
		{`{"command":["true"],"time":"1:2:3:4"}`, `time "1:2:3:4"`},
		{`{"command":[]}`, "command"},
		{`{"command":["true"],"tasks":"2"}`, "invalid JSON"},
	} {
		code, body := post(t, h.url, "/v1/jobs", "Bearer "+h.admin.Token, tc.body)
		if code != http.StatusBadRequest || !strings.Contains(body, tc.field) {
			t.Errorf("%s: %d %s; want 400 naming %q", tc.body, code, body, tc.field)
		}
	}
	// A zero the schema allows is no error: gpus 0 is a job without GPUs.
	if code, body := post(t, h.url, "/v1/jobs", "Bearer "+h.admin.Token, `{"command":["true"],"gpus":0,"cpu":0,"time":"90"}`); code != http.StatusCreated {
		t.Errorf("gpus 0, cpu 0, time 90: %d %s; want 201", code, body)
	}
}

func TestSubmitRefusesWhatNeverFitsNamingTheLimit(t *testing.T) {
	h := newHarness(t, 8)
	for _, tc := range []struct {
		req  api.JobRequest
		want string
	}{
		{api.JobRequest{GPUs: 9}, "gpus: 9; the largest node has 8 GPUs"},
		{api.JobRequest{GPUs: 4, Tasks: 3}, "gpus: 4 per task x 3 tasks; the largest node has 8 GPUs"},
		{api.JobRequest{GPUs: 1, CPU: 100000}, "cpu: 100000; the largest node has"},
		{api.JobRequest{GPUs: 1, MemoryMiB: 10 << 20}, "memory: 10 TiB; the largest node has 2 TiB"},
		{api.JobRequest{GPUs: 1, MemoryMiB: 1 << 20, Tasks: 3}, "memory: 1 TiB per task x 3 tasks; the largest node has 2 TiB"},
		{api.JobRequest{Share: 0.5, Tasks: 64}, "even empty"},
	} {
		tc.req.Command = []string{"true"}
		_, err := h.admin.Submit(context.Background(), tc.req)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != http.StatusUnprocessableEntity || !strings.Contains(ce.Message, tc.want) {
			t.Errorf("%+v: %v; want 422 saying %q", tc.req, err, tc.want)
		}
	}
}

func TestTenantTokenWithBearerInAnyCase(t *testing.T) {
	h := newHarness(t, 1)
	for _, tc := range []struct {
		auth string
		want int
	}{
		{"Bearer " + h.admin.Token, 200},
		{"bearer " + h.admin.Token, 200},
		{"BEARER " + h.admin.Token, 200},
		{"Bearer   " + h.admin.Token + " ", 200},
		{"Basic " + h.admin.Token, 401},
		{"Bearer", 401},
		{h.admin.Token, 401},
	} {
		req, _ := http.NewRequest("GET", h.url+"/v1/whoami", nil)
		req.Header.Set("Authorization", tc.auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Authorization %q: %d, want %d", strings.Replace(tc.auth, h.admin.Token, "TOKEN", 1), resp.StatusCode, tc.want)
		}
	}
}

// TestTimeoutsCloseSlowClients checks that a client that never finishes
// its headers is disconnected after ReadHeaderTimeout.
func TestTimeoutsCloseSlowClients(t *testing.T) {
	hs := HTTPServer(http.NotFoundHandler())
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.IdleTimeout <= 0 || hs.WriteTimeout != 0 {
		t.Fatalf("timeouts: header %v, read %v, idle %v, write %v; want the first three set and no write timeout",
			hs.ReadHeaderTimeout, hs.ReadTimeout, hs.IdleTimeout, hs.WriteTimeout)
	}
	hs.ReadHeaderTimeout = 200 * time.Millisecond
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(l)
	defer hs.Close()
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n") // never ends its headers
	begin := time.Now()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	io.Copy(io.Discard, conn)
	if took := time.Since(begin); took > 3*time.Second {
		t.Fatalf("a client that never finished its headers was held %v", took)
	}
}

func TestQueueListLeavesOutEnvButGetHasIt(t *testing.T) {
	h := newHarness(t, 1)
	j := h.submit(h.admin, api.JobRequest{GPUs: 1, Env: []string{"HF_TOKEN=secret"}, Command: sh(`test "$HF_TOKEN" = secret`)})
	h.waitState(h.admin, j.ID, store.Succeeded, 20*time.Second)
	jobs, err := h.admin.Jobs(context.Background(), nil)
	if err != nil || len(jobs) != 1 || len(jobs[0].Request.Env) != 0 {
		t.Fatalf("list: %+v, %v; want one job without its env", jobs, err)
	}
	got, err := h.admin.Job(context.Background(), j.ID)
	if err != nil || !slices.Equal(got.Request.Env, []string{"HF_TOKEN=secret"}) {
		t.Fatalf("get: %+v, %v; want the env", got.Request, err)
	}
}

// TestCancelManyNeverStartsWaitingJobs cancels a running job and the 100
// jobs waiting behind it in one call: the GPUs the running one frees must
// start none of them.
func TestCancelManyNeverStartsWaitingJobs(t *testing.T) {
	h := newHarness(t, 2)
	c := h.tenant("team", 0)
	first := h.submit(c, api.JobRequest{GPUs: 2, Command: []string{"sleep", "60"}})
	h.waitState(c, first.ID, store.Running, 20*time.Second)
	ids := []string{first.ID}
	for range 100 {
		ids = append(ids, h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"sleep", "60"}}).ID)
	}
	time.Sleep(200 * time.Millisecond) // a cycle has seen them wait
	res, err := c.CancelJobs(context.Background(), api.CancelRequest{IDs: ids})
	if err != nil || len(res.Jobs) != len(ids) || len(res.Errors) != 0 {
		t.Fatalf("cancel: %d jobs, errors %v, %v; want %d jobs", len(res.Jobs), res.Errors, err, len(ids))
	}
	h.waitState(c, first.ID, store.Cancelled, 20*time.Second)
	time.Sleep(300 * time.Millisecond) // cycles after the GPUs came back
	jobs, err := c.Jobs(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.State != "cancelled" || (j.ID != first.ID && j.Attempts != 0) {
			t.Errorf("%s: %s after %d attempts; want cancelled without starting", j.ID, j.State, j.Attempts)
		}
	}
}

func TestCancelManyFilters(t *testing.T) {
	h := newHarness(t, 1)
	alice, bob := h.tenant("alice", 0), h.tenant("bob", 0)
	sleep := func(c *client.Client, name string) string {
		return h.submit(c, api.JobRequest{Name: name, GPUs: 1, Command: []string{"sleep", "60"}}).ID
	}
	run := sleep(alice, "train")
	h.waitState(alice, run, store.Running, 20*time.Second)
	a2, a3, b4 := sleep(alice, "train"), sleep(alice, "eval"), sleep(bob, "train")
	for _, tc := range []struct {
		who      *client.Client
		req      api.CancelRequest
		want     []string
		wantErrs []string
	}{
		{alice, api.CancelRequest{Name: "train", States: []string{"pending"}}, []string{a2}, nil},
		{bob, api.CancelRequest{IDs: []string{a3}}, nil, []string{"no job " + a3}},
		{bob, api.CancelRequest{Name: "eval"}, nil, nil},
		{h.admin, api.CancelRequest{Tenant: "bob"}, []string{b4}, nil},
		{alice, api.CancelRequest{IDs: []string{a2, a3, a3}}, []string{a3}, []string{a2 + ": job has already ended (cancelled)"}},
		{alice, api.CancelRequest{States: []string{"running"}}, []string{run}, nil},
	} {
		res, err := tc.who.CancelJobs(context.Background(), tc.req)
		var got []string
		for _, j := range res.Jobs {
			got = append(got, j.ID)
		}
		if err != nil || !slices.Equal(got, tc.want) || !slices.Equal(res.Errors, tc.wantErrs) {
			t.Errorf("%+v: cancelled %v, errors %q, %v; want %v, %q", tc.req, got, res.Errors, err, tc.want, tc.wantErrs)
		}
	}
	h.waitState(alice, run, store.Cancelled, 20*time.Second)
	if j, _ := bob.Job(context.Background(), b4); j.State != "cancelled" {
		t.Errorf("bob's job is %s", j.State)
	}
}

func TestCancelManyRefusesBadRequests(t *testing.T) {
	h := newHarness(t, 1)
	alice := h.tenant("alice", 0)
	for _, tc := range []struct {
		body string
		code int
		want string
	}{
		{`{}`, 400, "nothing selected"},
		{`{"tenant":"bob"}`, 403, "only admins"},
		{`{"states":["failed"]}`, 400, `"failed"`},
		{`{"name":"../x"}`, 400, "name"},
		{`{"ids":["x1"]}`, 400, "ids"},
		{`{"ids":["j1"],"force":true}`, 400, "unknown field"},
	} {
		code, body := post(t, h.url, "/v1/jobs/cancel", "Bearer "+alice.Token, tc.body)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s; want %d saying %q", tc.body, code, body, tc.code, tc.want)
		}
	}
	if code, body := post(t, h.url, "/v1/jobs/cancel", "Bearer "+alice.Token, `{"tenant":"alice"}`); code != 200 || !bytes.Contains([]byte(body), []byte(`"jobs": []`)) {
		t.Errorf("alice cancelling her own (none): %d %s", code, body)
	}
}

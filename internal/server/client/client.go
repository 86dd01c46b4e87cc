// Package client is the Go client of corral's HTTP API, used by the CLI
// and by the server's tests. It imports only internal/server/api.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/server/api"
)

// DefaultServer is where the CLI looks for a server by default.
const DefaultServer = "http://127.0.0.1:7070"

// Client talks to one corral server with one token.
type Client struct {
	Server string // base URL, for example http://127.0.0.1:7070
	Token  string
	HTTP   *http.Client // nil: http.DefaultClient
}

// Error is an answer with a status of 400 or more.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status) }

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// Do sends a request and returns the response when its status is below
// 400; otherwise the body's error message as an *Error.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(data)
	}
	u := strings.TrimRight(c.Server, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var e api.Error
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(data))
		}
		return nil, &Error{Status: resp.StatusCode, Message: e.Error}
	}
	return resp, nil
}

func (c *Client) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	resp, err := c.Do(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// Submit submits a job.
func (c *Client) Submit(ctx context.Context, r api.JobRequest) (api.Job, error) {
	var j api.Job
	return j, c.call(ctx, "POST", "/v1/jobs", nil, r, &j)
}

// Jobs lists jobs; query may hold state (repeated) and tenant (admins).
func (c *Client) Jobs(ctx context.Context, query url.Values) ([]api.Job, error) {
	var l api.JobList
	return l.Jobs, c.call(ctx, "GET", "/v1/jobs", query, nil, &l)
}

// Job reads one job.
func (c *Client) Job(ctx context.Context, id string) (api.Job, error) {
	var j api.Job
	return j, c.call(ctx, "GET", "/v1/jobs/"+url.PathEscape(id), nil, nil, &j)
}

// Cancel cancels a job.
func (c *Client) Cancel(ctx context.Context, id string) (api.Job, error) {
	var j api.Job
	return j, c.call(ctx, "POST", "/v1/jobs/"+url.PathEscape(id)+"/cancel", nil, nil, &j)
}

// Hold holds a waiting job (every waiting task of an array named by its
// ID), like scontrol hold; Release lets it run.
func (c *Client) Hold(ctx context.Context, id string) ([]api.Job, error) {
	return c.control(ctx, "POST", id, "/hold", nil)
}

// Release releases a held job, like scontrol release.
func (c *Client) Release(ctx context.Context, id string) ([]api.Job, error) {
	return c.control(ctx, "POST", id, "/release", nil)
}

// Requeue puts a running or ended job back in the queue, held when
// hold, like scontrol requeue (requeuehold).
func (c *Client) Requeue(ctx context.Context, id string, hold bool) ([]api.Job, error) {
	return c.control(ctx, "POST", id, "/requeue", api.Requeue{Hold: hold})
}

// Update changes a waiting job, like scontrol update.
func (c *Client) Update(ctx context.Context, id string, u api.JobUpdate) ([]api.Job, error) {
	return c.control(ctx, "PATCH", id, "", u)
}

func (c *Client) control(ctx context.Context, method, id, verb string, body any) ([]api.Job, error) {
	var l api.JobList
	return l.Jobs, c.call(ctx, method, "/v1/jobs/"+url.PathEscape(id)+verb, nil, body, &l)
}

// CancelJobs cancels, in one call, the jobs r names or selects (like
// scancel with IDs, --user, --state and --name).
func (c *Client) CancelJobs(ctx context.Context, r api.CancelRequest) (api.CancelResult, error) {
	var res api.CancelResult
	return res, c.call(ctx, "POST", "/v1/jobs/cancel", nil, r, &res)
}

// Explain says why a job waits.
func (c *Client) Explain(ctx context.Context, id string) (api.Explain, error) {
	var e api.Explain
	return e, c.call(ctx, "GET", "/v1/jobs/"+url.PathEscape(id)+"/explain", nil, nil, &e)
}

// Logs copies a task's output to w; with follow it keeps copying until
// the job ends.
func (c *Client) Logs(ctx context.Context, id string, rank int, stream string, follow bool, w io.Writer) error {
	q := url.Values{"rank": {strconv.Itoa(rank)}}
	if stream != "" {
		q.Set("stream", stream)
	}
	if follow {
		q.Set("follow", "true")
	}
	return c.copyTo(ctx, "/v1/jobs/"+url.PathEscape(id)+"/logs", q, w)
}

// LogsTail writes the last n lines of a job's log (rank, stream as for
// Logs) as they are now.
func (c *Client) LogsTail(ctx context.Context, id string, rank int, stream string, n int, w io.Writer) error {
	q := url.Values{"rank": {strconv.Itoa(rank)}, "tail": {strconv.Itoa(n)}}
	if stream != "" {
		q.Set("stream", stream)
	}
	return c.copyTo(ctx, "/v1/jobs/"+url.PathEscape(id)+"/logs", q, w)
}

// copyTo copies the body of a GET to w as it arrives.
func (c *Client) copyTo(ctx context.Context, path string, q url.Values, w io.Writer) error {
	resp, err := c.Do(ctx, "GET", path, q, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, resp.Body)
	return err
}

// GPUs lists the machine's GPUs and what runs on them.
func (c *Client) GPUs(ctx context.Context) ([]api.GPU, error) {
	l, err := c.GPUList(ctx)
	return l.GPUs, err
}

// GPUList lists the GPUs and tells how jobs are isolated on them.
func (c *Client) GPUList(ctx context.Context) (api.GPUList, error) {
	var l api.GPUList
	return l, c.call(ctx, "GET", "/v1/gpus", nil, nil, &l)
}

// Acct reads accounting records and sums; query may hold tenant, since,
// until and period.
func (c *Client) Acct(ctx context.Context, query url.Values) (api.Acct, error) {
	var a api.Acct
	return a, c.call(ctx, "GET", "/v1/acct", query, nil, &a)
}

// AcctCSV copies accounting records as CSV to w.
func (c *Client) AcctCSV(ctx context.Context, query url.Values, w io.Writer) error {
	q := url.Values{}
	maps.Copy(q, query)
	q.Set("format", "csv")
	return c.copyTo(ctx, "/v1/acct", q, w)
}

// Whoami says whose the token is.
func (c *Client) Whoami(ctx context.Context) (api.Whoami, error) {
	var w api.Whoami
	return w, c.call(ctx, "GET", "/v1/whoami", nil, nil, &w)
}

// Tenants lists tenants (admins).
func (c *Client) Tenants(ctx context.Context) ([]api.Tenant, error) {
	var l api.TenantList
	return l.Tenants, c.call(ctx, "GET", "/v1/tenants", nil, nil, &l)
}

// CreateTenant adds a tenant (admins).
func (c *Client) CreateTenant(ctx context.Context, r api.TenantRequest) (api.Tenant, error) {
	return c.CreateTenantForce(ctx, r, false)
}

// CreateTenantForce adds a tenant; with force, even one that shares a
// Unix user with another or takes the quotas above the machine's GPUs.
func (c *Client) CreateTenantForce(ctx context.Context, r api.TenantRequest, force bool) (api.Tenant, error) {
	var t api.Tenant
	return t, c.call(ctx, "POST", "/v1/tenants", flag("force", force), r, &t)
}

// UpdateTenant changes the fields of a tenant that u gives (admins).
func (c *Client) UpdateTenant(ctx context.Context, name string, u api.TenantUpdate) (api.Tenant, error) {
	return c.UpdateTenantForce(ctx, name, u, false)
}

// UpdateTenantForce is UpdateTenant, with force as CreateTenantForce.
func (c *Client) UpdateTenantForce(ctx context.Context, name string, u api.TenantUpdate, force bool) (api.Tenant, error) {
	var t api.Tenant
	return t, c.call(ctx, "PATCH", "/v1/tenants/"+url.PathEscape(name), flag("force", force), u, &t)
}

// DeleteTenant removes a tenant and its tokens (admins); with drain, it
// cancels the tenant's waiting and running jobs, which otherwise make
// the deletion fail.
func (c *Client) DeleteTenant(ctx context.Context, name string, drain bool) (api.TenantDeleted, error) {
	var d api.TenantDeleted
	return d, c.call(ctx, "DELETE", "/v1/tenants/"+url.PathEscape(name), flag("drain", drain), nil, &d)
}

// IssueToken makes a new token for a tenant and revokes its others
// (admins).
func (c *Client) IssueToken(ctx context.Context, tenant string) (api.Token, error) {
	return c.issueToken(ctx, tenant, false)
}

// AddToken makes a new token for a tenant and keeps its others.
func (c *Client) AddToken(ctx context.Context, tenant string) (api.Token, error) {
	return c.issueToken(ctx, tenant, true)
}

func (c *Client) issueToken(ctx context.Context, tenant string, keep bool) (api.Token, error) {
	var t api.Token
	return t, c.call(ctx, "POST", "/v1/tenants/"+url.PathEscape(tenant)+"/tokens", flag("keep", keep), nil, &t)
}

// Tokens lists a tenant's tokens (admins).
func (c *Client) Tokens(ctx context.Context, tenant string) (api.TokenList, error) {
	var l api.TokenList
	return l, c.call(ctx, "GET", "/v1/tenants/"+url.PathEscape(tenant)+"/tokens", nil, nil, &l)
}

// Audit lists the admin actions (admins).
func (c *Client) Audit(ctx context.Context) ([]api.AuditEntry, error) {
	var l api.AuditLog
	return l.Entries, c.call(ctx, "GET", "/v1/audit", nil, nil, &l)
}

// flag is the query name=true when on, else none.
func flag(name string, on bool) url.Values {
	if !on {
		return nil
	}
	return url.Values{name: {"true"}}
}

package server

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

// TestLogsTailAndOffset: ?tail=N sends the last N lines, ?offset=B what
// follows byte B; X-Log-Offset says where an answer ends, so that a
// poller fetches only what is new.
func TestLogsTailAndOffset(t *testing.T) {
	h := newHarness(t, 1)
	c := h.tenant("team", 0)
	j := h.submit(c, api.JobRequest{GPUs: 1, Command: sh(`for i in 1 2 3 4 5; do echo line$i; done`)})
	h.waitState(c, j.ID, store.Succeeded, 20*time.Second)
	all := "line1\nline2\nline3\nline4\nline5\n"
	for _, tc := range []struct {
		query url.Values
		body  string
	}{
		{url.Values{}, all},
		{url.Values{"tail": {"2"}}, "line4\nline5\n"},
		{url.Values{"tail": {"10"}}, all},
		{url.Values{"offset": {"12"}}, "line3\nline4\nline5\n"},
		{url.Values{"offset": {"1000"}}, ""},
	} {
		body, end := getLog(t, c, j.ID, tc.query)
		if body != tc.body || end != len(all) {
			t.Errorf("%v: %q ending at %d, want %q ending at %d", tc.query, body, end, tc.body, len(all))
		}
	}
	for _, bad := range []url.Values{{"tail": {"-1"}}, {"offset": {"x"}}, {"tail": {"1"}, "offset": {"3"}}} {
		resp, err := c.Do(context.Background(), http.MethodGet, "/v1/jobs/"+j.ID+"/logs", bad, nil)
		if err == nil {
			resp.Body.Close()
			t.Errorf("%v accepted", bad)
		}
	}
}

// getLog fetches a log window and the offset where it ends.
func getLog(t *testing.T, c *client.Client, id string, q url.Values) (string, int) {
	t.Helper()
	resp, err := c.Do(context.Background(), http.MethodGet, "/v1/jobs/"+id+"/logs", q, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	end, err := strconv.Atoi(resp.Header.Get("X-Log-Offset"))
	if err != nil || resp.Header.Get("X-Log-Attempt") != "1" {
		t.Fatalf("X-Log-Offset %q, X-Log-Attempt %q", resp.Header.Get("X-Log-Offset"), resp.Header.Get("X-Log-Attempt"))
	}
	return string(body), end
}

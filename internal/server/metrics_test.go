package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

func TestMetricsReportQueueAllocationAndPreemption(t *testing.T) {
	h := newHarness(t, 2)
	c := h.tenant("team", 0)
	h.allowPriority("team", 9)
	low := h.submit(c, api.JobRequest{GPUs: 2, Priority: 1, Command: []string{"sleep", "60"}})
	h.waitState(c, low.ID, store.Running, 20*time.Second)
	h.submit(c, api.JobRequest{GPUs: 1, Priority: 1, Command: []string{"sleep", "60"}})
	time.Sleep(300 * time.Millisecond)
	m := scrape(t, h.url)
	for _, want := range []string{
		`corral_queue_jobs{tenant="team"} 1`,
		`corral_gpus_allocated 2`,
		`corral_jobs{state="running"} 1`,
		`corral_jobs{state="pending"} 1`,
		`corral_preemptions_total 0`,
		`corral_decision_seconds_count 1`,
		`corral_http_requests_total{code="201",route="POST /v1/jobs"} 2`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	high := h.submit(c, api.JobRequest{GPUs: 2, Priority: 9, Command: []string{"true"}})
	h.waitState(c, high.ID, store.Succeeded, 20*time.Second)
	if m := scrape(t, h.url); !strings.Contains(m, "corral_preemptions_total 1") || !strings.Contains(m, `corral_jobs_ended_total{state="preempted"} 1`) {
		t.Errorf("after a preemption the metrics say:\n%s", grep(m, "corral_"))
	}
	c.Cancel(context.Background(), low.ID)
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data)
}

func grep(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

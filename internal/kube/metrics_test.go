package kube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

// /metrics counts bindings, placement latency and pending pods by reason;
// /readyz is ready once the caches are; /livez fails when a leading
// replica has not finished a cycle for a long time.
func TestMetricsAndProbes(t *testing.T) {
	e := newEnv(t)
	e.node("metrics-0", 8, nil)
	q := e.createQueue("m", 4)
	s := e.newScheduler(e.config())
	h := s.Handler()
	if code, _ := get(t, h, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before the caches sync: %d, want 503", code)
	}
	e.startScheduler(s)
	over := pod("over", 8)
	over.Labels[LabelQueue] = q
	e.create(pod("one", 4), over, gate(pod("gated", 1)))
	e.waitBound("one")
	e.waitReason("over", ReasonWaitingForQuota, "over quota")
	for _, want := range []string{
		"corral_kube_binds_total 1",
		"corral_kube_placement_latency_seconds_count 1",
		`corral_kube_pending_pods{reason="WaitingForQuota"} 1`,
		`corral_kube_pending_pods{reason="SchedulingGated"} 1`,
		`corral_kube_pending_pods{reason="Unschedulable"} 0`,
		"corral_kube_leader 1",
	} {
		e.eventually(func() error {
			if _, body := get(t, h, "/metrics"); !strings.Contains(body, want) {
				return fmt.Errorf("/metrics lacks %q:\n%s", want, body)
			}
			return nil
		})
	}
	for _, path := range []string{"/readyz", "/livez", "/healthz"} {
		if code, body := get(t, h, path); code != http.StatusOK {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	s.lastEnd.Store(time.Now().Add(-time.Hour).UnixNano()) // as if the cycle hung
	if code, body := get(t, h, "/livez"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no scheduling cycle finished") {
		t.Errorf("/livez of a stuck leader: %d %s, want 503", code, body)
	}
}

// /metrics has each Queue's GPUs (used, nominal, borrowed, lent), its
// pending pods by reason and those waiting for lent quota to come back,
// and the Go, process and client-go series: a queue of 2 GPUs borrows 2
// of its cohort peer's 6, a second pod of it waits for quota, and a pod
// of the peer waits for the 2 it lent.
func TestQueueMetrics(t *testing.T) {
	e := newEnv(t)
	e.node("qmetrics-0", 8, nil)
	small, lender := e.cohortQueue("small", 2, "lab"), e.cohortQueue("lender", 6, "lab")
	s := e.newScheduler(e.config())
	h := s.Handler()
	e.startScheduler(s)
	borrower, waiter := pod("borrower", 4), pod("waiter", 6)
	borrower.Labels[LabelQueue], waiter.Labels[LabelQueue] = small, small
	e.create(borrower)
	e.waitBound("borrower")
	e.create(waiter)
	e.waitReason("waiter", ReasonWaitingForQuota, "over quota")
	owner := pod("owner", 6) // its queue's 6 GPUs, 2 of them lent to small
	owner.Labels[LabelQueue] = lender
	e.create(owner)
	e.waitReason("owner", ReasonWaitingForQuota, "lent to cohort")
	for _, want := range []string{
		`corral_kube_queue_gpus{kind="used",queue="` + small + `"} 4`,
		`corral_kube_queue_gpus{kind="nominal",queue="` + small + `"} 2`,
		`corral_kube_queue_gpus{kind="borrowed",queue="` + small + `"} 2`,
		`corral_kube_queue_gpus{kind="lent",queue="` + lender + `"} 2`,
		`corral_kube_queue_gpus{kind="used",queue="` + lender + `"} 0`,
		`corral_kube_queue_pending_pods{queue="` + small + `",reason="WaitingForQuota"} 1`,
		`corral_kube_queue_pending_pods{queue="` + small + `",reason="Unschedulable"} 0`,
		`corral_kube_queue_reclaim_waiting_pods{queue="` + small + `"} 0`,
		`corral_kube_queue_reclaim_waiting_pods{queue="` + lender + `"} 1`,
		"go_goroutines ",
		"process_resident_memory_bytes ",
		`corral_kube_client_requests_total{code="201",method="POST"} `,
		`corral_kube_client_request_duration_seconds_count{verb="POST"} `,
	} {
		e.eventually(func() error {
			if _, body := get(t, h, "/metrics"); !strings.Contains(body, want) {
				return fmt.Errorf("/metrics lacks %q:\n%s", want, grepLines(body, "queue"))
			}
			return nil
		})
	}
	// The lender Queue deleted mid-run, with its waiting pod: its series
	// go; the borrower's stay.
	zero := int64(0)
	ctx := context.Background()
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(ctx, "owner", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Dynamic.Resource(QueueResource).Delete(ctx, lender, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually(func() error {
		_, body := get(t, h, "/metrics")
		if strings.Contains(body, `queue="`+lender+`"`) || !strings.Contains(body, `corral_kube_queue_gpus{kind="used",queue="`+small+`"} 4`) {
			return fmt.Errorf("after deleting %s, /metrics has:\n%s", lender, grepLines(body, "queue="))
		}
		return nil
	})
}

// grepLines is the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

package kube

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
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

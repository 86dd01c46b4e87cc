package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the scheduler's probes and metrics:
//
//	/livez, /healthz  200 unless this replica leads and no cycle has
//	                  finished for a while (a stuck scheduler: restart it)
//	/readyz           200 once the informers' caches are synced
//	/metrics          Prometheus metrics
func (s *Scheduler) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/livez", s.live)
	mux.HandleFunc("/healthz", s.live)
	mux.HandleFunc("/readyz", s.ready)
	mux.Handle("/metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	return mux
}

// stallAfter is how long a leading replica may go without finishing a
// cycle before /livez fails.
func (s *Scheduler) stallAfter() time.Duration { return max(time.Minute, 10*s.cfg.Interval) }

func (s *Scheduler) live(w http.ResponseWriter, _ *http.Request) {
	if s.leading.Load() {
		if since := time.Since(time.Unix(0, s.lastEnd.Load())); since > s.stallAfter() {
			http.Error(w, fmt.Sprintf("leading, but no scheduling cycle finished for %s", since.Round(time.Second)), http.StatusServiceUnavailable)
			return
		}
	}
	fmt.Fprintln(w, "ok")
}

func (s *Scheduler) ready(w http.ResponseWriter, _ *http.Request) {
	if !s.synced.Load() {
		http.Error(w, "informer caches not synced yet", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

// ServeOn serves Handler on ln until ctx ends.
func (s *Scheduler) ServeOn(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("health and metrics endpoint: %w", err)
	}
	return nil
}

package kube

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
)

// client-go reports its requests to one process-wide hook; these are the
// collectors it feeds, which every scheduler's registry serves.
var (
	clientRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "corral_kube_client_requests_total", Help: "Requests to the API server, by HTTP status code (or <error>) and method.",
	}, []string{"code", "method"})
	clientLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "corral_kube_client_request_duration_seconds", Help: "Time requests to the API server take, by verb.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"verb"})
	clientHook sync.Once
)

// hookClientMetrics has client-go report to clientRequests and
// clientLatency, once per process.
func hookClientMetrics() {
	clientHook.Do(func() {
		clientmetrics.Register(clientmetrics.RegisterOpts{RequestResult: requestResult{}, RequestLatency: requestLatency{}})
	})
}

type requestResult struct{}

func (requestResult) Increment(_ context.Context, code, method, _ string) {
	clientRequests.WithLabelValues(code, method).Inc()
}

type requestLatency struct{}

func (requestLatency) Observe(_ context.Context, verb string, _ url.URL, latency time.Duration) {
	clientLatency.WithLabelValues(verb).Observe(latency.Seconds())
}

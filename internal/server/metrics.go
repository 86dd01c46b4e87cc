package server

import (
	"github.com/corral-sched/corral/internal/store"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the server's Prometheus metrics, on a registry of their own.
type metrics struct {
	reg         *prometheus.Registry
	queue       *prometheus.GaugeVec
	jobs        *prometheus.GaugeVec
	allocated   prometheus.Gauge
	decision    prometheus.Histogram
	preemptions prometheus.Counter
	started     prometheus.Counter
	ended       *prometheus.CounterVec
	requests    *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		queue: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "corral_queue_jobs", Help: "Jobs waiting for GPUs, by tenant.",
		}, []string{"tenant"}),
		jobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "corral_jobs", Help: "Jobs that are waiting or running, by state.",
		}, []string{"state"}),
		allocated: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "corral_gpus_allocated", Help: "GPUs held by running jobs (slices and shares count their fraction).",
		}),
		decision: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "corral_decision_seconds", Help: "Time from considering a job to having it started.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		preemptions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "corral_preemptions_total", Help: "Running jobs stopped to make room for higher-priority work.",
		}),
		started: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "corral_jobs_started_total", Help: "Job starts (a requeued job counts each start).",
		}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_jobs_ended_total", Help: "Job runs that ended, by how: succeeded, failed, cancelled, preempted or requeued.",
		}, []string{"state"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_http_requests_total", Help: "API requests by route and status code.",
		}, []string{"route", "code"}),
	}
	m.reg.MustRegister(m.queue, m.jobs, m.allocated, m.decision, m.preemptions, m.started, m.ended, m.requests)
	return m
}

// endLabel is the state label of corral_jobs_ended_total for a run that
// ended in st: a run put back in the queue (lost or drained, and
// requeued) counts as "requeued", since no run ends "pending".
func endLabel(st store.State) string {
	if st == store.Pending {
		return "requeued"
	}
	return string(st)
}

// setQueue refreshes the gauges from the waiting jobs; the caller holds
// the server's lock and refreshes allocation separately.
func (m *metrics) setQueue(waiting map[uint64]store.Job) {
	m.queue.Reset()
	counts := map[store.State]int{}
	tenants := map[string]int{}
	for _, j := range waiting {
		tenants[j.Tenant]++
		counts[j.State]++
	}
	for t, n := range tenants {
		m.queue.WithLabelValues(t).Set(float64(n))
	}
	for _, st := range []store.State{store.Pending, store.Preempted} {
		m.jobs.WithLabelValues(string(st)).Set(float64(counts[st]))
	}
}

// refresh sets every gauge from the server's state.
func (s *Server) refreshMetrics() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metrics.setQueue(s.waiting)
	total := 0
	for _, r := range s.runs {
		total += int(s.need(&r.job)[gpuFlavor])
	}
	s.metrics.allocated.Set(float64(total) / 1000)
	s.metrics.jobs.WithLabelValues(string(store.Running)).Set(float64(len(s.runs)))
}

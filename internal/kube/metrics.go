package kube

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the scheduler's Prometheus metrics, on a registry of their
// own (several schedulers may run in one process).
type metrics struct {
	reg       *prometheus.Registry
	placement prometheus.Histogram
	cycle     prometheus.Histogram
	pending   *prometheus.GaugeVec
	nodes     *prometheus.GaugeVec
}

func newMetrics(n *counters, leading *atomic.Bool) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		placement: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "corral_kube_placement_latency_seconds", Help: "Time from a pod's creation to its binding.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 20),
		}),
		cycle: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "corral_kube_cycle_duration_seconds", Help: "Time one scheduling cycle takes to decide, before binding.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "corral_kube_pending_pods", Help: "Pods of this scheduler that wait, by the reason of their PodScheduled condition.",
		}, []string{"reason"}),
		nodes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "corral_kube_gpu_nodes_not_in_catalog", Help: "GPU nodes whose model corral's catalog lacks: described from labels, or left out.",
		}, []string{"state"}),
	}
	m.reg.MustRegister(m.placement, m.cycle, m.pending, m.nodes,
		counterFunc("corral_kube_binds_total", "Pods bound.", &n.binds),
		counterFunc("corral_kube_bind_conflicts_total", "Bindings refused because the pod was bound already.", &n.conflicts),
		counterFunc("corral_kube_bind_failures_total", "Other failed bindings.", &n.failures),
		counterFunc("corral_kube_evictions_total", "Pods evicted to make room for higher-priority work.", &n.evictions),
		counterFunc("corral_kube_evictions_refused_total", "Evictions a PodDisruptionBudget refused.", &n.refused),
		counterFunc("corral_kube_pending_reasons_written_total", "PodScheduled=False conditions written (only on change).", &n.unfit),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "corral_kube_leader", Help: "1 while this replica schedules."},
			func() float64 { return boolFloat(leading.Load()) }),
	)
	return m
}

func counterFunc(name, help string, v *atomic.Int64) prometheus.CounterFunc {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(v.Load()) })
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// setPending sets the pending gauge from a cycle's rejections and its
// gated pods.
func (m *metrics) setPending(rejects []rejection, gated int) {
	counts := map[string]int{ReasonSchedulingGated: gated}
	for _, r := range rejects {
		counts[reasonFor(r.code)] += len(r.pods)
	}
	for _, reason := range []string{ReasonUnschedulable, ReasonWaitingForQuota, ReasonWaitingForGang,
		ReasonWaitingForReservation, ReasonWaitingForPreemption, ReasonSchedulerError} {
		counts[reason] += 0 // a reason that empties reads 0, not its last value
	}
	for reason, n := range counts {
		m.pending.WithLabelValues(reason).Set(float64(n))
	}
}

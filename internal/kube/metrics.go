package kube

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/corral-sched/corral/internal/sched"
)

// metrics are the scheduler's Prometheus metrics, on a registry of their
// own (several schedulers may run in one process).
type metrics struct {
	reg       *prometheus.Registry
	placement prometheus.Histogram
	cycle     prometheus.Histogram
	pending   *prometheus.GaugeVec
	nodes     *prometheus.GaugeVec
	// Per queue (its name, from the pods' corral.sh/queue label).
	queuePending *prometheus.GaugeVec // by queue and reason
	queueReclaim *prometheus.GaugeVec // pods waiting for their queue's lent quota back
	queueGPUs    *prometheus.GaugeVec // by queue and kind: used, nominal, borrowed, lent
	queues       map[string]bool      // the queues the per-queue series were last set for
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
		queuePending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "corral_kube_queue_pending_pods", Help: "Pods of a Queue that wait, by the reason of their PodScheduled condition.",
		}, []string{"queue", "reason"}),
		queueReclaim: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "corral_kube_queue_reclaim_waiting_pods", Help: "Pods of a Queue that wait for GPUs it lent to its cohort to come back.",
		}, []string{"queue"}),
		queueGPUs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "corral_kube_queue_gpus", Help: "GPUs of a Queue, by kind: used (admitted), nominal (its quota), borrowed (used beyond it), lent (of it, used by its cohort).",
		}, []string{"queue", "kind"}),
		queues: map[string]bool{},
	}
	hookClientMetrics()
	m.reg.MustRegister(m.placement, m.cycle, m.pending, m.nodes, m.queuePending, m.queueReclaim, m.queueGPUs,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		clientRequests, clientLatency,
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

// pendingReasons are the reasons a pod of this scheduler waits for, as
// its PodScheduled condition says, but a scheduling gate.
var pendingReasons = []string{ReasonUnschedulable, ReasonWaitingForQuota, ReasonWaitingForGang,
	ReasonWaitingForReservation, ReasonWaitingForPreemption, ReasonSchedulerError}

// setPending sets the pending gauge from a cycle's rejections and its
// gated pods.
func (m *metrics) setPending(rejects []rejection, gated int) {
	counts := map[string]int{ReasonSchedulingGated: gated}
	for _, r := range rejects {
		counts[reasonFor(r.code)] += len(r.pods)
	}
	for _, reason := range pendingReasons {
		counts[reason] += 0 // a reason that empties reads 0, not its last value
	}
	for reason, n := range counts {
		m.pending.WithLabelValues(reason).Set(float64(n))
	}
}

// setQueues sets the per-queue series from the ledger's book after a
// cycle and the cycle's rejections; queues gone since the last cycle
// lose their series.
func (m *metrics) setQueues(use []sched.QueueUse, rejects []rejection) {
	now := map[string]bool{}
	pending := map[[2]string]int{}
	reclaim := map[string]int{}
	for _, u := range use {
		now[u.Queue] = true
	}
	for _, r := range rejects {
		q := r.pods[0].Labels[LabelQueue]
		if q == "" {
			continue
		}
		now[q] = true
		pending[[2]string{q, reasonFor(r.code)}] += len(r.pods)
		if r.reclaim {
			reclaim[q] += len(r.pods)
		}
	}
	for q := range m.queues {
		if !now[q] {
			m.queuePending.DeletePartialMatch(prometheus.Labels{"queue": q})
			m.queueReclaim.DeleteLabelValues(q)
			m.queueGPUs.DeletePartialMatch(prometheus.Labels{"queue": q})
		}
	}
	m.queues = now
	for q := range now {
		for _, reason := range pendingReasons {
			m.queuePending.WithLabelValues(q, reason).Set(float64(pending[[2]string{q, reason}]))
		}
		m.queueReclaim.WithLabelValues(q).Set(float64(reclaim[q]))
	}
	for _, u := range use {
		for kind, v := range map[string]int64{"used": u.Used, "nominal": u.Nominal, "borrowed": u.Borrowed, "lent": u.Lent} {
			m.queueGPUs.WithLabelValues(u.Queue, kind).Set(float64(v) / 1000)
		}
	}
}

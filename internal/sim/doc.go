// Package sim replays a workload through time on a fleet: jobs arrive,
// wait, start when a policy places them, run for their true duration and
// leave. It is a discrete-event simulation on a virtual clock, so the same
// inputs give the same outputs byte for byte.
//
// A Policy decides, at every moment something happens, which pending jobs
// start: corral's, which is internal/sched's Cycle, the cycle every face
// runs (corral.go builds its snapshot and applies its decisions, elastic
// resizes and defragmentation's moves included), and models of
// other systems, labelled as models and each configured as its
// documentation gives for GPU clusters, citing the pages it follows
// (Docs): slurm-like (cons_tres per-GPU GRES, multifactor priority,
// backfill, QOS preemption), kueue-like (BestEffortFIFO ClusterQueues in a
// cohort, preemption, waitForPodsReady), kube-default and kube-packed
// (PrioritySort, NodeResourcesFit LeastAllocated or MostAllocated,
// priority preemption, no gangs), volcano-like (gang, binpack,
// proportion with reclaim) and kai-like (quota then over-quota weight,
// reclaim of over-quota work). The earlier, misconfigured models stay as
// labelled worst cases: slurm-exclusive (whole nodes) and kueue-strict
// (StrictFIFO, pods spread and interleaved). peers.go holds what the
// models share. Metrics (metrics.go) are
// waits, completion times, GPU allocation and use, and the jobs left stuck.
// A job whose tenant's quota, with everything its cohort could lend, can
// never admit it is refused when it arrives, before any policy sees it
// (refuse.go), as corral refuses it at submit.
//
// It imports the core (internal/gang, internal/fleet, internal/job) and
// internal/workload; it reads no clock. Start with Run in sim.go.
package sim

// Package kube is corral's Kubernetes face: a secondary scheduler that
// places pods whose spec.schedulerName is "corral" with the same core as
// the simulator and the server.
//
// Informers keep Nodes, Pods, PodGroups (scheduling.x-k8s.io/v1alpha1,
// Kubernetes' own scheduling.k8s.io at the version served, Volcano's and
// KAI's where served), Jobs, JobSets and Queues (corral.sh/v1alpha1) in
// memory; the custom ones are found through discovery as corral starts
// and every few seconds after, so that a CRD installed or removed later is
// read or let go without a restart (discover.go); groups.go says which
// group a pod is in, grouplisters.go reads them. Each cycle (Scheduler.Cycle in
// scheduler.go) takes a snapshot from that cache (snapshot.go): a
// fleet.Fleet from the nodes' labels and allocatable resources (nodes.go),
// a gang.State holding every bound pod where it runs, and a queue.Book of
// the quota in use (queues.go). The pods reach a cycle as the informer's
// handlers saw them change (livepods.go: podFeed), not as a list: the
// cycle keeps every pod's class, bound, gated or pending
// (podclasses.go), and what it asks of them without looking at every
// pod. The fleet, state and running units are kept from cycle to cycle
// (kept.go, keptunits.go): only the nodes replaced and the bound pods
// changed are described and adopted again, and a cycle decides in a
// trial (gang.State.Begin) that the next undoes. Kubernetes' own filter plugins
// (internal/kube/upstream, run by filters.go) say on which nodes each
// pending pod may run, dynamic resources included, on a view of the
// cluster they keep from cycle to cycle as kube-scheduler keeps its
// cache, told the pods that came to or left the nodes; their verdicts reach
// the core as taints. decide (decide.go) then runs the shared
// scheduling cycle (internal/sched) over it, and does no I/O
// (TestDecideDoesNoIO); confirm, the apply step, checks every pod the
// core placed again with those placed before it, writing the claims the
// pods of one unit share, before anything is bound: pending pods and pod groups
// are its units (units.go), bound pods its running units; each unit is
// placed whole or not at all, charged to its queue, and bound through the
// pods/binding subresource (binder.go). PodGroup and Queue status are
// kept current by a background writer (objstatus.go); a pod group no set
// of nodes holds asks for capacity with a ProvisioningRequest
// (provision.go). Pods with scheduling gates are never placed. Work that
// does not fit gets the core's reasons as a FailedScheduling event and a
// PodScheduled=False condition whose reason says whether capacity would
// help (status.go: written by a background worker when it changes; events
// by workers of their own, never dropped, eventwriter.go), or evicts lower-priority
// work through the Eviction API (preempt.go). Only
// one replica schedules at a time: leader election through a
// coordination.k8s.io Lease (elect.go). Accounting records go out as JSON
// lines (accounting.go) and to ConfigMaps a new leader continues
// (acctstore.go). client.go builds the clients, rate limited in
// cluster as with a kubeconfig; http.go serves probes and the metrics of
// metrics.go.
//
// It imports the core (internal/fleet, internal/gang, internal/job,
// internal/gpu, internal/queue, internal/sched), client-go and, through
// internal/kube/upstream, the scheduler framework of k8s.io/kubernetes;
// nothing in the core imports it. Start reading at Scheduler in scheduler.go, then decide.go.
package kube

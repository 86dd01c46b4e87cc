package kube

import (
	"io"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// Level is one topology level of the fleet and the node labels that name a
// node's domain at it: the first of them the node has. A node with none
// of them is in the level's domain "none" under its parent, with every
// other such node there, except at the NVLink level, where it is a
// domain of its own (NVLink ends at the node).
type Level struct {
	Name   string   // "rack"
	Labels []string // ["topology.k8s.aws/network-node-layer-3", "corral.sh/rack"]
}

// label is the first of l's labels that n has, and its value.
func (l Level) label(nodeLabels map[string]string) (key, value string) {
	for _, k := range l.Labels {
		if v := nodeLabels[k]; v != "" {
			return k, v
		}
	}
	return "", ""
}

// Config says how the scheduler reads the cluster.
type Config struct {
	// SchedulerName is the spec.schedulerName of the pods it places.
	SchedulerName string
	// Levels are the topology levels, outermost first; nil means
	// DefaultLevels.
	Levels []Level
	// NVLinkLevel names the level (one of Levels) whose domains are
	// rack-scale NVLink domains, or is empty. With Levels nil it defaults
	// to DefaultNVLinkLevel.
	NVLinkLevel string
	// NodeSelector limits the nodes it places on; nil means all.
	NodeSelector labels.Selector
	// Interval is the longest time between two scheduling cycles; a change
	// in the cluster starts one sooner.
	Interval time.Duration
	// DiscoveryInterval is how often the API server's discovery is read
	// for the custom resources corral reads (PodGroups of every kind,
	// JobSets, Queues), so that a CRD installed or removed after start-up
	// is read or let go without a restart; 0 means 5s.
	DiscoveryInterval time.Duration
	// NoPreemption turns preemption off. With it on, a pod or pod group
	// that does not fit evicts the fewest lower-priority units (pods, or
	// whole pod groups) placed by this scheduler that make room, through
	// the Eviction API, which honours PodDisruptionBudgets.
	NoPreemption bool
	// PreemptionGrace, when set, is the termination grace period of
	// evicted pods; otherwise each pod's own.
	PreemptionGrace *int64
	// ReclaimPatience is how long a unit within its Queue's quota waits
	// for room before it evicts the cohort peers' borrowing pods: 0 is
	// sched.DefaultReclaimPatience, negative reclaims at once.
	ReclaimPatience time.Duration
	// Reservations is how many waiting units (pods, or whole pod groups)
	// hold a reservation: the room they wait for, which later units may
	// use only if they end before it is due (backfill). 0 means 1;
	// negative means none, so every unit starts as soon as it fits, as
	// the upstream scheduler places pods: a large gang then waits until
	// the small pods that keep arriving leave it room.
	Reservations int
	// Defrag lets the first unit that waits for room, and would wait
	// long, start by evicting pods that checkpoint
	// (AnnotationCheckpointEvery) and have a controller to start them
	// again, when the GPUs it needs are free but scattered and it gains
	// more GPU-hours than they lose (sched.Defrag): at most
	// DefragMovesPerHour units an hour (0: 4).
	Defrag             bool
	DefragMovesPerHour int
	// Accounting, when set, receives a JSON line per Record: pods and pod
	// groups started, preempted and ended, with waits and GPU-seconds.
	Accounting io.Writer
	// AccountingConfigMaps, when set ("namespace/prefix"), keeps the
	// accounting records in the API server too, in ConfigMaps
	// prefix-NNNNNN of the namespace, so that the log survives restarts
	// and a new leader continues it (acctstore.go).
	AccountingConfigMaps string
	// UnitMemoryConfigMap, when set ("namespace/name"), keeps the core's
	// memory of units (how often each was preempted, until when it may
	// not borrow, the room claimed for it), the mix of pod shapes the
	// packing policy learned (learned.go) and the times of the last
	// hour's defragmentation moves (defragmoves.go) in that ConfigMap, so that a
	// new leader or a restarted replica continues it (memstore.go);
	// otherwise it lives in this replica only.
	UnitMemoryConfigMap string
	// DRAGPUDrivers are the DRA drivers whose devices are GPUs to the
	// core (dra.go); nil is DefaultDRAGPUDrivers.
	DRAGPUDrivers []string
	// Now is the clock of the accounting records; default time.Now.
	Now func() time.Time
	// Events, when set, is the client events are written with, so that
	// they have a rate limit of their own (NewClients makes one);
	// otherwise the scheduler's client.
	Events kubernetes.Interface
	// Health says what marks a node faulty, about to go, or a hot spare
	// (health.go); unset fields take the defaults.
	Health HealthConfig
}

// Default names.
const (
	DefaultSchedulerName = "corral"
	// LabelPodGroup puts a pod in a PodGroup of its namespace.
	LabelPodGroup = "scheduling.x-k8s.io/pod-group"
	// AnnotationPack asks for a pod group's pods to be kept inside one
	// domain of the named level ("rack"); AnnotationPackPreferred asks
	// for it as best effort.
	AnnotationPack          = "corral.sh/pack"
	AnnotationPackPreferred = "corral.sh/pack-preferred"
	// AnnotationSpread asks for a pod group's pods to be spread across the
	// domains of the named level, at most AnnotationSpreadMax (default 1)
	// per domain; AnnotationSpreadPreferred asks for it as best effort.
	AnnotationSpread          = "corral.sh/spread"
	AnnotationSpreadPreferred = "corral.sh/spread-preferred"
	AnnotationSpreadMax       = "corral.sh/spread-max"
)

func (c *Config) withDefaults() Config {
	out := *c
	if out.SchedulerName == "" {
		out.SchedulerName = DefaultSchedulerName
	}
	if out.Levels == nil {
		out.Levels = DefaultLevels()
		if out.NVLinkLevel == "" {
			out.NVLinkLevel = DefaultNVLinkLevel
		}
	}
	if out.NodeSelector == nil {
		out.NodeSelector = labels.Everything()
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	out.Health = out.Health.withDefaults()
	if out.Interval == 0 {
		out.Interval = 2 * time.Second
	}
	if out.DiscoveryInterval == 0 {
		out.DiscoveryInterval = 5 * time.Second
	}
	return out
}

// draGPUDrivers are the DRA drivers of GPUs, DefaultDRAGPUDrivers unless
// set.
func (c *Config) draGPUDrivers() []string {
	if c.DRAGPUDrivers == nil {
		return DefaultDRAGPUDrivers
	}
	return c.DRAGPUDrivers
}

package kube

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/fleet"
)

// HealthConfig says which node conditions, taints and labels mark a node
// faulty or about to go, and which nodes are hot spares. Each list left
// nil takes its default; an empty list turns that source off.
type HealthConfig struct {
	// FaultConditions are node condition types whose status True marks a
	// GPU fault (node-problem-detector and NVSentinel report health checks
	// as conditions), or "Type=Status" for another status.
	FaultConditions []string
	// FaultTaints are taint keys, FaultLabels label keys ("key", or
	// "key=value") that mark a GPU fault.
	FaultTaints, FaultLabels []string
	// NoticeTaints and NoticeLabels mark a node about to be taken away:
	// the spot interruption and maintenance taints of the AWS node
	// termination handler, Karpenter's disruption taints, GKE's
	// impending-termination taint.
	NoticeTaints, NoticeLabels []string
	// SpareLabel ("key" or "key=value") marks hot spares: kept free for
	// replacing a failed node of a running gang in the same domain, lent
	// meanwhile only to preemptible pods.
	SpareLabel string
	// Grace is how long a node must have been NotReady before its gangs
	// are moved or requeued; new placements stop at once.
	Grace time.Duration
	// IgnoreDeviceHealth turns off the device health the kubelet reports
	// in pods' status (allocatedResourcesStatus, from device plugins and
	// DRA drivers): by default a pod whose device is reported Unhealthy
	// is handled as if its node had a GPU fault.
	IgnoreDeviceHealth bool
	// MoveOffCordoned stops the pods on a cordoned node as on a node with
	// a notice (the notice annotation, their own grace period) and queues
	// them again; by default a cordon only keeps new pods off.
	MoveOffCordoned bool
}

// Default sources of node health.
var (
	DefaultFaultConditions = []string{"GpuXidError", "GpuFallenOffBus", "GpuNvlinkError", "GPUHealthy=False"}
	DefaultFaultTaints     = []string{"corral.sh/gpu-fault"}
	DefaultFaultLabels     = []string{"corral.sh/gpu-fault"}
	DefaultNoticeTaints    = []string{
		"aws-node-termination-handler/spot-itn",
		"aws-node-termination-handler/rebalance-recommendation",
		"aws-node-termination-handler/scheduled-maintenance",
		"aws-node-termination-handler/asg-lifecycle-termination",
		"karpenter.sh/disrupted",  // Karpenter v1
		"karpenter.sh/disruption", // Karpenter before v1 (value disrupting)
		"cloud.google.com/impending-node-termination",
	}
	DefaultNoticeLabels = []string{"corral.sh/interruption"}
)

// DefaultSpareLabel marks hot spares.
const DefaultSpareLabel = "corral.sh/spare=true"

func (h HealthConfig) withDefaults() HealthConfig {
	if h.FaultConditions == nil {
		h.FaultConditions = DefaultFaultConditions
	}
	if h.FaultTaints == nil {
		h.FaultTaints = DefaultFaultTaints
	}
	if h.FaultLabels == nil {
		h.FaultLabels = DefaultFaultLabels
	}
	if h.NoticeTaints == nil {
		h.NoticeTaints = DefaultNoticeTaints
	}
	if h.NoticeLabels == nil {
		h.NoticeLabels = DefaultNoticeLabels
	}
	if h.SpareLabel == "" {
		h.SpareLabel = DefaultSpareLabel
	}
	return h
}

// Kinds of node fault.
const (
	FaultNotReady = "node-not-ready"
	FaultGPU      = "gpu-fault"
	FaultNotice   = "spot-notice"
	FaultCordoned = "cordoned"
)

// nodeFault is what is wrong with a node: kind is "" for a healthy node;
// source names the condition, taint or label that says so; since is when
// it was first seen, where the node tells (zero otherwise).
type nodeFault struct {
	kind, source string
	since        time.Time
}

// graceful: the node still runs (a notice, a cordon); its pods get the
// notice and their own grace period, and are queued again, not moved.
func (f nodeFault) graceful() bool { return f.kind == FaultNotice || f.kind == FaultCordoned }

func (f nodeFault) String() string {
	if f.kind == "" {
		return "healthy"
	}
	return f.kind + " (" + f.source + ")"
}

// check reads the node's health: NotReady first, then a GPU fault, then a
// notice, then a cordon.
func (h HealthConfig) check(n *corev1.Node) nodeFault {
	if f, ok := notReady(n); ok {
		return f
	}
	for _, c := range n.Status.Conditions {
		for _, want := range h.FaultConditions {
			typ, status, ok := strings.Cut(want, "=")
			if !ok {
				status = string(corev1.ConditionTrue)
			}
			if string(c.Type) == typ && string(c.Status) == status {
				return nodeFault{kind: FaultGPU, source: "condition " + want, since: c.LastTransitionTime.Time}
			}
		}
	}
	if f, ok := marked(n, h.FaultTaints, h.FaultLabels, FaultGPU); ok {
		return f
	}
	if f, ok := marked(n, h.NoticeTaints, h.NoticeLabels, FaultNotice); ok {
		return f
	}
	if n.Spec.Unschedulable {
		return nodeFault{kind: FaultCordoned, source: "spec.unschedulable"}
	}
	return nodeFault{}
}

func notReady(n *corev1.Node) (nodeFault, bool) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return nodeFault{}, false
			}
			return nodeFault{kind: FaultNotReady, source: fmt.Sprintf("condition Ready=%s", c.Status), since: c.LastTransitionTime.Time}, true
		}
	}
	return nodeFault{kind: FaultNotReady, source: "no Ready condition"}, true
}

// marked finds one of the taint keys or labels on the node.
func marked(n *corev1.Node, taints, labels []string, kind string) (nodeFault, bool) {
	for _, t := range n.Spec.Taints {
		if slices.Contains(taints, t.Key) {
			f := nodeFault{kind: kind, source: "taint " + t.Key}
			if t.TimeAdded != nil {
				f.since = t.TimeAdded.Time
			}
			return f, true
		}
	}
	for _, l := range labels {
		if hasLabel(n, l) {
			return nodeFault{kind: kind, source: "label " + l}, true
		}
	}
	return nodeFault{}, false
}

// hasLabel matches "key" (any value) or "key=value".
func hasLabel(n *corev1.Node, want string) bool {
	key, value, withValue := strings.Cut(want, "=")
	got, ok := n.Labels[key]
	return ok && (!withValue || got == value)
}

// fleetHealth is the node's health as the core places on it: a node that
// failed or has a faulty GPU is unhealthy, one cordoned or with a notice
// is cordoned; neither takes new work.
func (h HealthConfig) fleetHealth(n *corev1.Node) fleet.Health {
	switch h.check(n).kind {
	case FaultNotReady, FaultGPU:
		return fleet.Unhealthy
	case FaultNotice, FaultCordoned:
		return fleet.Cordoned
	}
	return fleet.Healthy
}

// spare reports whether the node is a hot spare.
func (h HealthConfig) spare(n *corev1.Node) bool {
	return h.SpareLabel != "" && hasLabel(n, h.SpareLabel)
}

// ParseList reads a comma-separated list; "" is an empty list (the
// source turned off), "-" keeps the default (nil).
func ParseList(s string) []string {
	if s == "-" {
		return nil
	}
	out := []string{}
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// deviceFaults are the pods whose containers report an allocated device
// Unhealthy, each with its fault. Only those pods (and their gangs) are
// stopped: the device plugin or DRA driver takes the device out of what
// the node offers, and the rest of the node works on.
func (h HealthConfig) deviceFaults(pods []*corev1.Pod) map[types.UID]nodeFault {
	out := map[types.UID]nodeFault{}
	if h.IgnoreDeviceHealth {
		return out
	}
	for _, p := range pods {
		if p.Spec.NodeName == "" || terminal(p) {
			continue
		}
		if d := unhealthyDevice(p); d != "" {
			out[p.UID] = nodeFault{kind: FaultGPU, source: "device health: " + d + " Unhealthy"}
		}
	}
	return out
}

// unhealthyDevice names a device the pod's containers report Unhealthy
// ("nvidia.com/gpu GPU-1234"), or is "".
func unhealthyDevice(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		for _, r := range cs.AllocatedResourcesStatus {
			for _, d := range r.Resources {
				if d.Health == corev1.ResourceHealthStatusUnhealthy {
					return string(r.Name) + " " + string(d.ResourceID)
				}
			}
		}
	}
	return ""
}

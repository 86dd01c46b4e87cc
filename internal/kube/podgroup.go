package kube

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/corral-sched/corral/internal/job"
)

// PodGroupResource is the coscheduling PodGroup of the scheduler-plugins
// project, whose CRD is deploy/crds/scheduling.x-k8s.io_podgroups.yaml.
var PodGroupResource = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}

// NativePodGroupResource is Kubernetes' own PodGroup, the Workload API's
// (beta in 1.37, with the GenericWorkload feature): pods name it in
// spec.schedulingGroup, and spec.schedulingPolicy.gang.minCount makes it
// all or nothing. It is read at the first of NativePodGroupVersions the
// cluster serves.
var NativePodGroupResource = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1beta1", Resource: "podgroups"}

// GroupName is the pod group a pod belongs to: the coscheduling label,
// Kubernetes' own spec.schedulingGroup, Volcano's or KAI's annotation, or
// the group inferred from its owner (groupOf); "" for none.
func GroupName(p *corev1.Pod) string {
	name, _ := groupOf(p)
	return name
}

// parseNativePodGroup reads a Kubernetes PodGroup: a gang policy's
// minCount, its topology constraints (keys of levels), and corral's
// topology annotations. A group with the basic policy is no gang: its pods
// start as they fit (a minimum of one).
func parseNativePodGroup(obj *unstructured.Unstructured, levels []Level) (*podGroup, error) {
	g := &podGroup{Namespace: obj.GetNamespace(), Name: obj.GetName(), Native: true, Kind: KindNative}
	min, found, err := unstructured.NestedInt64(obj.Object, "spec", "schedulingPolicy", "gang", "minCount")
	if err != nil {
		return nil, fmt.Errorf("pod group %s: spec.schedulingPolicy.gang.minCount: %w", g.key(), err)
	}
	if !found {
		min = 1 // the basic policy: pods start as they fit
	}
	g.MinMember = max(int(min), 1)
	topo, err := topologyConstraints(obj, levels)
	if err != nil {
		g.Invalid = err.Error()
	}
	g.Topology = append(topo, packConstraints(obj.GetAnnotations())...)
	return g, nil
}

// podGroup is what the scheduler reads from a PodGroup.
type podGroup struct {
	Namespace, Name string
	MinMember       int
	Topology        []job.Constraint
	// Native: Kubernetes' own PodGroup.
	Native bool
	// Kind says where the group was read (KindCoscheduling, ...).
	Kind string
	// Invalid says why the group cannot be placed as written, or is "".
	Invalid string
}

// PodGroup phases corral writes in status.phase.
const (
	PhasePending   = "Pending"   // fewer than minMember pods bound
	PhaseScheduled = "Scheduled" // at least minMember pods bound
)

func (g *podGroup) key() string { return g.Namespace + "/" + g.Name }

// parsePodGroup reads spec.minMember and the topology annotations.
func parsePodGroup(obj *unstructured.Unstructured) (*podGroup, error) {
	g := &podGroup{Namespace: obj.GetNamespace(), Name: obj.GetName(), Kind: KindCoscheduling}
	min, found, err := unstructured.NestedInt64(obj.Object, "spec", "minMember")
	if err != nil {
		return nil, fmt.Errorf("pod group %s: spec.minMember: %w", g.key(), err)
	}
	if !found || min < 1 {
		min = 1
	}
	g.MinMember = int(min)
	g.Topology = packConstraints(obj.GetAnnotations())
	return g, nil
}

// packConstraints reads corral's topology annotations of a pod group:
// pack into one domain of a level, or spread across domains (at most
// AnnotationSpreadMax pods per domain, default 1), each required or
// preferred.
func packConstraints(ann map[string]string) []job.Constraint {
	var out []job.Constraint
	if l := ann[AnnotationPack]; l != "" {
		out = append(out, job.Constraint{Level: l, Required: true})
	}
	if l := ann[AnnotationPackPreferred]; l != "" && l != ann[AnnotationPack] {
		out = append(out, job.Constraint{Level: l})
	}
	perDomain, _ := strconv.Atoi(ann[AnnotationSpreadMax])
	if l := ann[AnnotationSpread]; l != "" {
		out = append(out, job.Constraint{Level: l, Spread: true, Required: true, MaxPerDomain: max(perDomain, 0)})
	} else if l := ann[AnnotationSpreadPreferred]; l != "" {
		out = append(out, job.Constraint{Level: l, Spread: true, MaxPerDomain: max(perDomain, 0)})
	}
	return out
}

package kube

import (
	"fmt"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/corral-sched/corral/internal/job"
)

// Groups that users do not write by hand: other schedulers' PodGroups
// named by a pod annotation, and groups corral infers from a pod's owner.
// The group names of inferred groups carry a kind prefix with a colon,
// which no object name has, so they never meet a PodGroup's name.

// NativePodGroupVersions are the versions of Kubernetes' own PodGroup
// (scheduling.k8s.io) corral reads, most preferred first: v1beta1 as
// Kubernetes 1.37 serves it with the GenericWorkload feature gate (beta,
// off by default) and --runtime-config=scheduling.k8s.io/v1beta1=true,
// else v1alpha3.
var NativePodGroupVersions = []string{"v1beta1", "v1alpha3"}

// Other schedulers' PodGroups, read as gangs of spec.minMember.
var (
	// VolcanoPodGroupResource is Volcano's PodGroup; pods name it with
	// AnnotationVolcanoGroup.
	VolcanoPodGroupResource = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}
	// KAIPodGroupResource is the KAI scheduler's PodGroup; pods name it
	// with AnnotationKAIGroup.
	KAIPodGroupResource = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v2alpha2", Resource: "podgroups"}
	// JobSetResource is a JobSet: all pods of all its Jobs are one gang.
	JobSetResource = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
)

// Pod labels and annotations that put a pod in a group.
const (
	AnnotationVolcanoGroup = "scheduling.k8s.io/group-name"
	// AnnotationVolcanoGroupNew is Volcano's own spelling of it.
	AnnotationVolcanoGroupNew = "scheduling.volcano.sh/group-name"
	AnnotationKAIGroup        = "pod-group-name"
	LabelJobSetName           = "jobset.sigs.k8s.io/jobset-name"
	LabelLWSName              = "leaderworkerset.sigs.k8s.io/name"
	LabelLWSGroupIndex        = "leaderworkerset.sigs.k8s.io/group-index"
	AnnotationLWSSize         = "leaderworkerset.sigs.k8s.io/size"
	// AnnotationJobIndex marks the pods of an indexed Job.
	AnnotationJobIndex = batchv1.JobCompletionIndexAnnotation
)

// Kinds of pod groups, by where corral reads them.
const (
	KindCoscheduling = "coscheduling" // scheduling.x-k8s.io PodGroup
	KindNative       = "native"       // scheduling.k8s.io PodGroup
	KindVolcano      = "volcano"
	KindKAI          = "kai"
	KindJob          = "job"    // an indexed batch/v1 Job
	KindJobSet       = "jobset" // a JobSet
	KindLWS          = "lws"    // one group of a LeaderWorkerSet
)

// groupOf is the pod group a pod belongs to and its kind; "" for none. A
// pod's explicit group (coscheduling label, spec.schedulingGroup, Volcano's
// or KAI's annotation) wins over one inferred from its owner.
func groupOf(p *corev1.Pod) (name, kind string) {
	switch {
	case p.Labels[LabelPodGroup] != "":
		return p.Labels[LabelPodGroup], KindCoscheduling
	case p.Spec.SchedulingGroup != nil && p.Spec.SchedulingGroup.PodGroupName != nil:
		return *p.Spec.SchedulingGroup.PodGroupName, KindNative
	case p.Annotations[AnnotationVolcanoGroup] != "":
		return p.Annotations[AnnotationVolcanoGroup], KindVolcano
	case p.Annotations[AnnotationVolcanoGroupNew] != "":
		return p.Annotations[AnnotationVolcanoGroupNew], KindVolcano
	case p.Annotations[AnnotationKAIGroup] != "":
		return p.Annotations[AnnotationKAIGroup], KindKAI
	case p.Labels[LabelLWSName] != "" && p.Annotations[AnnotationLWSSize] != "":
		return KindLWS + ":" + p.Labels[LabelLWSName] + ":" + p.Labels[LabelLWSGroupIndex], KindLWS
	case p.Labels[LabelJobSetName] != "":
		return KindJobSet + ":" + p.Labels[LabelJobSetName], KindJobSet
	}
	if o := metav1.GetControllerOf(p); o != nil && o.Kind == "Job" && o.APIVersion == "batch/v1" && p.Annotations[AnnotationJobIndex] != "" {
		return KindJob + ":" + o.Name, KindJob
	}
	return "", ""
}

// groupResource names what a missing group of a kind is, for the reason a
// pod waits with.
func groupResource(kind string) string {
	switch kind {
	case KindNative:
		return "a PodGroup (podgroups.scheduling.k8s.io)"
	case KindVolcano:
		return "a PodGroup (" + VolcanoPodGroupResource.GroupResource().String() + ")"
	case KindKAI:
		return "a PodGroup (" + KAIPodGroupResource.GroupResource().String() + ")"
	case KindJob:
		return "its Job (jobs.batch)"
	case KindJobSet:
		return "its JobSet (" + JobSetResource.GroupResource().String() + ")"
	default:
		return "a PodGroup (" + PodGroupResource.GroupResource().String() + ")"
	}
}

// servedVersion returns the first of versions of group that the API server
// serves resource in, or "" when it serves none.
func servedVersion(d discovery.DiscoveryInterface, group, resource string, versions []string) string {
	for _, v := range versions {
		list, err := d.ServerResourcesForGroupVersion(group + "/" + v)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if r.Name == resource {
				return v
			}
		}
	}
	return ""
}

// topologyConstraints reads the Workload API's
// spec.schedulingConstraints.topology: each key, a node label, must be the
// label of one of corral's levels (or the hostname, a node); all pods are
// packed into one domain of it.
func topologyConstraints(obj *unstructured.Unstructured, levels []Level) ([]job.Constraint, error) {
	list, _, err := unstructured.NestedSlice(obj.Object, "spec", "schedulingConstraints", "topology")
	if err != nil {
		return nil, fmt.Errorf("spec.schedulingConstraints.topology: %w", err)
	}
	var out []job.Constraint
	for _, item := range list {
		m, _ := item.(map[string]any)
		key, _ := m["key"].(string)
		level := ""
		if key == corev1.LabelHostname {
			level = "node"
		}
		for _, l := range levels {
			if level == "" && slices.Contains(l.Labels, key) {
				level = l.Name // the outermost level reading it: rack, not leaf, for EKS's layer 3
			}
		}
		if level == "" {
			return nil, fmt.Errorf("topology key %q is not the label of one of corral's topology levels (--topology-levels)", key)
		}
		out = append(out, job.Constraint{Level: level, Required: true})
	}
	return out, nil
}

// parseMinMemberGroup reads another scheduler's PodGroup (Volcano's, KAI's):
// spec.minMember, and corral's topology annotations.
func parseMinMemberGroup(obj *unstructured.Unstructured, kind string) (*podGroup, error) {
	g := &podGroup{Namespace: obj.GetNamespace(), Name: obj.GetName(), Kind: kind}
	min, _, err := unstructured.NestedInt64(obj.Object, "spec", "minMember")
	if err != nil {
		return nil, fmt.Errorf("%s pod group %s: spec.minMember: %w", kind, g.key(), err)
	}
	g.MinMember = max(int(min), 1)
	g.Topology = packConstraints(obj.GetAnnotations())
	return g, nil
}

// jobGroup reads a batch/v1 Job as a group: an indexed Job whose
// parallelism equals its completions is a gang of parallelism pods, less
// the indexes that succeeded already; any other indexed Job starts its
// pods as they fit.
func jobGroup(j *batchv1.Job) *podGroup {
	g := &podGroup{Namespace: j.Namespace, Name: KindJob + ":" + j.Name, Kind: KindJob, MinMember: 1}
	par, comp := int32(1), int32(1)
	if j.Spec.Parallelism != nil {
		par = *j.Spec.Parallelism
	}
	if j.Spec.Completions != nil {
		comp = *j.Spec.Completions
	}
	indexed := j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
	if indexed && par == comp && par > 1 {
		g.MinMember = max(int(comp-j.Status.Succeeded), 1)
	}
	g.Topology = packConstraints(j.Annotations)
	return g
}

// jobSetGroup reads a JobSet as one gang: replicas times parallelism of
// each replicated Job.
func jobSetGroup(obj *unstructured.Unstructured) (*podGroup, error) {
	g := &podGroup{Namespace: obj.GetNamespace(), Name: KindJobSet + ":" + obj.GetName(), Kind: KindJobSet}
	rjs, _, err := unstructured.NestedSlice(obj.Object, "spec", "replicatedJobs")
	if err != nil {
		return nil, fmt.Errorf("jobset %s: spec.replicatedJobs: %w", obj.GetName(), err)
	}
	for _, item := range rjs {
		m, _ := item.(map[string]any)
		replicas, found, _ := unstructured.NestedInt64(m, "replicas")
		if !found {
			replicas = 1
		}
		par, found, _ := unstructured.NestedInt64(m, "template", "spec", "parallelism")
		if !found {
			par = 1
		}
		g.MinMember += int(replicas * par)
	}
	g.MinMember = max(g.MinMember, 1)
	g.Topology = packConstraints(obj.GetAnnotations())
	return g, nil
}

// lwsGroups are the groups of LeaderWorkerSet pods among pods: each group
// (leader and workers) is a gang of the size its pods carry.
func lwsGroups(pods []*corev1.Pod, into map[string]*podGroup) {
	for _, p := range pods {
		name, kind := groupOf(p)
		if kind != KindLWS || into[p.Namespace+"/"+name] != nil {
			continue
		}
		size, err := strconv.Atoi(p.Annotations[AnnotationLWSSize])
		g := &podGroup{Namespace: p.Namespace, Name: name, Kind: KindLWS, MinMember: max(size, 1)}
		if err != nil {
			g.Invalid = fmt.Sprintf("annotation %s=%q is not a number", AnnotationLWSSize, p.Annotations[AnnotationLWSSize])
		}
		into[g.key()] = g
	}
}

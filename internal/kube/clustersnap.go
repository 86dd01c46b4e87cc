package kube

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// AnnotationRuntime on a pod is its expected run time (a Go duration such
// as "6h"): what corral sim assumes when it replays a snapshot.
const AnnotationRuntime = "corral.sh/runtime"

// Snapshot is a live cluster as the simulator replays it: the fleet its
// nodes make, the GPU pods bound to them and the GPU pods waiting, each as
// a job (the pods of a waiting pod group as one gang).
type Snapshot struct {
	Taken   time.Time
	Fleet   *fleet.Fleet
	Running []SnapshotJob
	Pending []SnapshotJob
	Skipped []string // nodes and pods left out, and why
	// Described are the GPU nodes whose model corral's catalog lacks,
	// described from their labels and capacity, and how.
	Described []string
}

// SnapshotJob is one job of a snapshot.
type SnapshotJob struct {
	Job     *job.Job
	Created time.Time
	Started time.Time     // zero for pending jobs
	Runtime time.Duration // from AnnotationRuntime; 0 when not given
}

// TakeSnapshot lists the cluster's nodes and pods once. Pods that ask for
// no GPU, and pods that finished, are left out.
func TakeSnapshot(ctx context.Context, cs kubernetes.Interface, cfg Config) (*Snapshot, error) {
	c := cfg.withDefaults()
	nodeList, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("snapshot: list nodes: %w", err)
	}
	podList, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("snapshot: list pods: %w", err)
	}
	var nodes []*corev1.Node
	for i := range nodeList.Items {
		nodes = append(nodes, &nodeList.Items[i])
	}
	f, skipped, described := buildFleet(nodes, &c, nil)
	s := &Snapshot{Taken: c.Now(), Fleet: f}
	for _, name := range slices.Sorted(maps.Keys(skipped)) {
		s.Skipped = append(s.Skipped, fmt.Sprintf("node %s: %v", name, skipped[name]))
	}
	for _, name := range slices.Sorted(maps.Keys(described)) {
		s.Described = append(s.Described, fmt.Sprintf("node %s: %s", name, described[name]))
	}
	groups := map[string][]*corev1.Pod{}
	var groupOrder []string
	for i := range podList.Items {
		p := &podList.Items[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
			continue
		}
		d, err := demand(p)
		if err != nil {
			s.Skipped = append(s.Skipped, fmt.Sprintf("pod %s: %v", podKey(p), err))
			continue
		}
		if d.GPUs == 0 && d.Shares == 0 && d.MIG == "" {
			continue
		}
		if p.Spec.NodeName != "" {
			s.Running = append(s.Running, snapshotJob(podKey(p), []*corev1.Pod{p}, []job.Demand{d}, s.Taken))
			continue
		}
		g := GroupName(p)
		if g == "" {
			s.Pending = append(s.Pending, snapshotJob(podKey(p), []*corev1.Pod{p}, []job.Demand{d}, s.Taken))
			continue
		}
		key := p.Namespace + "/" + g
		if groups[key] == nil {
			groupOrder = append(groupOrder, key)
		}
		groups[key] = append(groups[key], p)
	}
	for _, key := range groupOrder {
		pods := groups[key]
		sort.Slice(pods, func(a, b int) bool { return pods[a].Name < pods[b].Name })
		var ds []job.Demand
		for _, p := range pods {
			d, _ := demand(p) // checked above
			ds = append(ds, d)
		}
		s.Pending = append(s.Pending, snapshotJob(key, pods, ds, s.Taken))
	}
	byCreation := func(js []SnapshotJob) {
		sort.SliceStable(js, func(a, b int) bool {
			if !js[a].Created.Equal(js[b].Created) {
				return js[a].Created.Before(js[b].Created)
			}
			return js[a].Job.Name < js[b].Job.Name
		})
	}
	byCreation(s.Running)
	byCreation(s.Pending)
	return s, nil
}

// snapshotJob makes one job of pods with their demands: one task group per
// pod, the namespace (or the queue label) as tenant.
func snapshotJob(name string, pods []*corev1.Pod, ds []job.Demand, now time.Time) SnapshotJob {
	first := pods[0]
	tenant := first.Namespace
	if q := first.Labels[LabelQueue]; q != "" {
		tenant = q
	}
	j := &job.Job{Name: name, Tenant: tenant, Priority: int(podPriority(first))}
	for i, p := range pods {
		j.Groups = append(j.Groups, job.Group{Name: p.Name, Count: 1, Task: ds[i]})
	}
	sj := SnapshotJob{Job: j, Created: first.CreationTimestamp.Time}
	if rt, err := time.ParseDuration(first.Annotations[AnnotationRuntime]); err == nil && rt > 0 {
		sj.Runtime = rt
		j.Runtime = rt
	}
	if first.Spec.NodeName != "" {
		sj.Started = sj.Created
		if first.Status.StartTime != nil {
			sj.Started = first.Status.StartTime.Time
		}
	}
	return sj
}

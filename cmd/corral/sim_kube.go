package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/workload"
)

// Classes of a replayed cluster snapshot.
const (
	classRunning = "running at snapshot"
	classPending = "pending at snapshot"
)

// kubeInput replays a live cluster: its nodes as the fleet, the GPU pods
// running now and the GPU pods waiting (a pod group as one gang). Every
// policy places the running pods again at time 0 (not necessarily where
// they are), each for what remains of its expected run time (annotation
// corral.sh/runtime, else --snapshot-runtime), then the waiting ones in
// creation order; the waits of the "pending at snapshot" class answer
// "how long would today's queue wait under each policy".
func kubeInput(o simOptions) (*fleet.Fleet, workload.Workload, string, error) {
	rc, err := restConfig(o.kubeconfig)
	if err != nil {
		return nil, workload.Workload{}, "", err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, workload.Workload{}, "", fmt.Errorf("kubernetes client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	snap, err := kube.TakeSnapshot(ctx, cs, kube.Config{})
	if err != nil {
		return nil, workload.Workload{}, "", err
	}
	if len(snap.Fleet.Nodes) == 0 {
		return nil, workload.Workload{}, "", fmt.Errorf("the cluster has no node corral can describe (%d left out)", len(snap.Skipped))
	}
	w := workload.Workload{}
	for _, sj := range snap.Running {
		run := orDuration(sj.Runtime, o.snapshotRuntime)
		left := max(run-snap.Taken.Sub(sj.Started), time.Minute)
		w.Arrivals = append(w.Arrivals, workload.Arrival{At: 0, Duration: left, Class: classRunning, Job: sj.Job})
	}
	for i, sj := range snap.Pending {
		run := orDuration(sj.Runtime, o.snapshotRuntime)
		w.Arrivals = append(w.Arrivals, workload.Arrival{At: time.Second + time.Duration(i), Duration: run, Class: classPending, Job: sj.Job})
	}
	for _, a := range w.Arrivals {
		w.Horizon = max(w.Horizon, a.At+a.Duration)
	}
	label := fmt.Sprintf("snapshot of %s at %s: %d GPU pods running, %d jobs waiting (%d nodes or pods left out; %d nodes of GPU models not in the catalog, described from their labels)",
		rc.Host, snap.Taken.UTC().Format(time.RFC3339), len(snap.Running), len(snap.Pending), len(snap.Skipped), len(snap.Described))
	return snap.Fleet, w, label, nil
}

func orDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

package kube

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// bindWorkers is how many API calls (bindings, status patches) are in
// flight at once.
const bindWorkers = 16

// Stats counts what the scheduler did since it started.
type Stats struct {
	Binds     int64 // pods bound
	Conflicts int64 // bindings the API server refused because the pod was already bound
	Failures  int64 // other failed bindings
	Unfit     int64 // FailedScheduling reports written
	Evictions int64 // pods evicted to make room for higher-priority work
	Refused   int64 // evictions a PodDisruptionBudget refused
}

type counters struct{ binds, conflicts, failures, unfit, evictions, refused atomic.Int64 }

func (c *counters) stats() Stats {
	return Stats{Binds: c.binds.Load(), Conflicts: c.conflicts.Load(), Failures: c.failures.Load(),
		Unfit: c.unfit.Load(), Evictions: c.evictions.Load(), Refused: c.refused.Load()}
}

// bindAll binds each pod through the pods/binding subresource, several at
// a time, and returns the bindings' errors. Events are the caller's, off
// this path.
func bindAll(ctx context.Context, client kubernetes.Interface, binds []binding, n *counters) []error {
	errs := make([]error, len(binds))
	parallel(len(binds), func(i int) { errs[i] = bind(ctx, client, binds[i], n) })
	return errs
}

// parallel runs fn(0..n-1) on up to bindWorkers goroutines.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	work := make(chan int)
	for range min(bindWorkers, n) {
		wg.Go(func() {
			for i := range work {
				fn(i)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

// bind prepares and binds one pod; when either fails, what its placement
// reserved is released.
func bind(ctx context.Context, client kubernetes.Interface, b binding, n *counters) error {
	err := bindOnly(ctx, client, b, n)
	if err != nil && b.release != nil {
		b.release(ctx)
	}
	return err
}

func bindOnly(ctx context.Context, client kubernetes.Interface, b binding, n *counters) error {
	if b.prepare != nil {
		if err := b.prepare(ctx); err != nil {
			n.failures.Add(1)
			return fmt.Errorf("binding %s/%s to %s: %w", b.pod.Namespace, b.pod.Name, b.node, err)
		}
	}
	target := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: b.pod.Namespace, Name: b.pod.Name, UID: b.pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: b.node},
	}
	if !b.at.IsZero() { // the API server copies a binding's annotations onto the pod
		target.Annotations = map[string]string{AnnotationBoundAt: b.at.UTC().Format(time.RFC3339Nano)}
	}
	if b.shareGPU != "" {
		target.Annotations = withLabels(target.Annotations, map[string]string{AnnotationShareGPU: b.shareGPU})
	}
	err := client.CoreV1().Pods(b.pod.Namespace).Bind(ctx, target, metav1.CreateOptions{})
	switch {
	case err == nil:
		n.binds.Add(1)
		return nil
	case apierrors.IsConflict(err):
		n.conflicts.Add(1)
	default:
		n.failures.Add(1)
	}
	return fmt.Errorf("binding %s/%s to %s: %w", b.pod.Namespace, b.pod.Name, b.node, err)
}

package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// ceiling is the API server's own limit: a client that binds placements
// computed before it starts (first fit by GPUs), from 16 workers, with no
// client-side rate limit. No scheduler binds faster on this API server.
const ceiling = "ceiling"

// startCeiling places every pod of ns first fit on the bench nodes, then
// binds them all as fast as it can; stop waits for it.
func startCeiling(ctx context.Context, c *kubetest.Cluster, ns string, o options) (func(), error) {
	rc := rest.CopyConfig(c.Config)
	rc.QPS, rc.Burst = 1e6, 1e6
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	bindings, err := placeFirstFit(ctx, client, ns)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = parallel(len(bindings), func(i int) error {
			return client.CoreV1().Pods(ns).Bind(ctx, bindings[i], metav1.CreateOptions{})
		})
	}()
	return func() { <-done }, nil
}

// placeFirstFit assigns each pod of ns, in name order, to the first bench
// node with GPUs enough left; pods that fit nowhere stay unbound.
func placeFirstFit(ctx context.Context, client kubernetes.Interface, ns string) ([]*corev1.Binding, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "bench=gpu"})
	if err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("pods: %w", err)
	}
	free := make([]int64, len(nodes.Items))
	for i, n := range nodes.Items {
		q := n.Status.Allocatable[kubetest.ResourceGPU]
		free[i] = q.Value()
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	var out []*corev1.Binding
	for _, p := range pods.Items {
		q := p.Spec.Containers[0].Resources.Requests[kubetest.ResourceGPU]
		for i := range free {
			if free[i] >= q.Value() {
				free[i] -= q.Value()
				out = append(out, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns, UID: p.UID},
					Target: corev1.ObjectReference{Kind: "Node", Name: nodes.Items[i].Name}})
				break
			}
		}
	}
	return out, nil
}

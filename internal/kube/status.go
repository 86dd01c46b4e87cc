package kube

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Event reasons, as the upstream scheduler writes them.
const (
	EventFailedScheduling = "FailedScheduling"
	EventScheduled        = "Scheduled"
)

// reportAll reports every rejection, several pods at a time, and returns
// the errors.
func reportAll(ctx context.Context, client kubernetes.Interface, component string, rejects []rejection, n *counters) []error {
	type item struct {
		pod     *corev1.Pod
		message string
	}
	var items []item
	for _, r := range rejects {
		for _, p := range r.pods {
			if !hasCondition(p, r.message) {
				items = append(items, item{p, r.message})
			}
		}
	}
	errs := make([]error, len(items))
	parallel(len(items), func(i int) { errs[i] = reportUnfit(ctx, client, component, items[i].pod, items[i].message, n) })
	return errs
}

// reportUnfit sets PodScheduled=False with message on the pod and records
// a FailedScheduling event.
func reportUnfit(ctx context.Context, client kubernetes.Interface, component string, p *corev1.Pod, message string, n *counters) error {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{{
		Type:               corev1.PodScheduled,
		Status:             corev1.ConditionFalse,
		Reason:             corev1.PodReasonUnschedulable,
		Message:            message,
		LastTransitionTime: metav1.Now(),
	}}}})
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("pod %s/%s condition: %w", p.Namespace, p.Name, err)
	}
	n.unfit.Add(1)
	return emit(ctx, client, component, p, corev1.EventTypeWarning, EventFailedScheduling, message)
}

func hasCondition(p *corev1.Pod, message string) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Message == message
		}
	}
	return false
}

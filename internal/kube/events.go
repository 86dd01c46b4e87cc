package kube

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// emit writes an Event about pod. It is called from the workers that bind
// and report, so that a burst of decisions neither queues nor drops events.
func emit(ctx context.Context, client kubernetes.Interface, component string, pod *corev1.Pod, kind, reason, message string) error {
	now := time.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x", pod.Name, now.UnixNano()),
			Namespace: pod.Namespace,
		},
		InvolvedObject: corev1.ObjectReference{
			Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
			UID: pod.UID, ResourceVersion: pod.ResourceVersion,
		},
		Reason:              reason,
		Message:             message,
		Type:                kind,
		Source:              corev1.EventSource{Component: component},
		ReportingController: component,
		FirstTimestamp:      metav1.NewTime(now),
		LastTimestamp:       metav1.NewTime(now),
		Count:               1,
	}
	if _, err := client.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("event %s for %s: %w", reason, podKey(pod), err)
	}
	return nil
}

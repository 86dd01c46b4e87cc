package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Event reasons. FailedScheduling and Scheduled are the upstream
// scheduler's; the node ones are corral's.
const (
	EventFailedScheduling = "FailedScheduling"
	EventScheduled        = "Scheduled"
	// EventUnknownGPUModel is on a node whose GPU model corral's catalog
	// lacks: corral describes it from the node's labels and capacity.
	EventUnknownGPUModel = "UnknownGPUModel"
	// EventGPUsNotDescribed is on a GPU node corral leaves out of its
	// fleet, because it cannot describe its GPUs.
	EventGPUsNotDescribed = "GPUsNotDescribed"
)

// newRecorder starts client-go's event broadcaster, which writes events
// from a goroutine of its own (a decision never waits for one, and a burst
// drops events rather than queueing without bound) and aggregates them as
// the upstream scheduler's do: a repeated event raises the count of the
// one written, and similar events of one object are combined. It stops
// when ctx ends.
func newRecorder(ctx context.Context, client kubernetes.Interface, component string) record.EventRecorder {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
}

// nodeRef names a node for an event, as the kubelet does.
func nodeRef(name string) runtime.Object {
	return &corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: name, UID: types.UID(name)}
}

package kube

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
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

// nodeRef names a node for an event, as the kubelet does.
func nodeRef(name string) runtime.Object {
	return &corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: name, UID: types.UID(name)}
}

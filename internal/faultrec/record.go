package faultrec

import "time"

// Kinds of fault.
const (
	NodeFailure = "node-failure" // the node stopped: NotReady, or failed in the simulator
	GPUFault    = "gpu-fault"    // a health check marked the node's GPUs faulty
	SpotNotice  = "spot-notice"  // the node is about to be taken away
	Maintenance = "maintenance"  // the node was cordoned, and its work asked to move
)

// Actions taken.
const (
	Replaced = "replaced" // the work on the node moved to a spare (or free node) of the same domain
	Requeued = "requeued" // the work stopped whole and went back to its queue
)

// Record is one piece of work (a job, a pod group or a pod) stopped or
// moved by a fault on one node.
type Record struct {
	Event  string    `json:"event"` // always "fault"
	Time   time.Time `json:"time"`  // when the fault was seen and what to do decided
	Kind   string    `json:"kind"`
	Node   string    `json:"node"`
	Source string    `json:"source,omitempty"` // the condition, taint or label that told
	Work   string    `json:"work"`             // the job, pod group or pod
	Action string    `json:"action"`
	To     string    `json:"to,omitempty"` // Replaced: the node it moved to
	// GPUs the work held; LostGPUHours the work since its last checkpoint
	// (all of it without one), lost; RecoverySeconds from the fault (as
	// the node tells: its condition's transition, its taint's time) to
	// the decision.
	GPUs            float64 `json:"gpus"`
	LostGPUHours    float64 `json:"lost_gpu_hours"`
	RecoverySeconds float64 `json:"recovery_seconds"`
}

// Event is the value of Record.Event.
const Event = "fault"

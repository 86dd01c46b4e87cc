package gang

// Reason says why a node cannot take a task. Reasons are counted per node
// and shown to users, so each is a complete phrase.
type Reason string

// Reasons a node rejects a task.
const (
	ReasonUnhealthy = Reason("node is unhealthy or cordoned")
	ReasonSpare     = Reason("node is a hot spare: kept for replacing failed nodes, lent only to short preemptible work")
	ReasonNoGPU     = Reason("node has no GPUs")
	ReasonModel     = Reason("GPU model not allowed")
	ReasonStaticMIG = Reason("GPUs are partitioned with a fixed MIG layout")
	ReasonNoMIG     = Reason("GPUs are not in MIG mode")
	ReasonProfile   = Reason("MIG profile not offered by this GPU model")
	ReasonNoSharing = Reason("GPUs are not shared (no time-slicing)")
	// ReasonNoTimeSlices: time-sliced shares asked of GPUs shared only
	// by fractions.
	ReasonNoTimeSlices = Reason("GPUs are shared by fractions, not time slices")
	ReasonGPUsBusy     = Reason("not enough free GPU capacity")
	ReasonCPU          = Reason("not enough free CPU")
	ReasonMemory       = Reason("not enough free memory")
	ReasonSpread       = Reason("spread limit reached in this domain")
	ReasonTaint        = Reason("node has a taint the job does not tolerate")
)

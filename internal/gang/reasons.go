package gang

// Reason is a code for why a node cannot take a task. Nodes are counted
// per reason (Unfit's Filtered), and faces word each code their own way;
// String is the core's wording, a complete phrase.
type Reason uint8

// Reasons a node rejects a task. ReasonNone: it takes one.
const (
	ReasonNone Reason = iota
	ReasonUnhealthy
	ReasonSpare
	ReasonNoGPU
	ReasonModel
	ReasonStaticMIG
	ReasonNoMIG
	ReasonProfile
	ReasonNoSharing
	// ReasonNoTimeSlices: time-sliced shares asked of GPUs shared only
	// by fractions.
	ReasonNoTimeSlices
	ReasonGPUsBusy // a dimension exhausted: GPUs
	ReasonCPU      // a dimension exhausted: CPU
	ReasonMemory   // a dimension exhausted: memory
	ReasonSpread
	ReasonTaint // NodeCount.Detail names the taint not tolerated
)

var reasonText = [...]string{
	ReasonNone:         "",
	ReasonUnhealthy:    "node is unhealthy or cordoned",
	ReasonSpare:        "node is a hot spare: kept for replacing failed nodes, lent only to short preemptible work",
	ReasonNoGPU:        "node has no GPUs",
	ReasonModel:        "GPU model not allowed",
	ReasonStaticMIG:    "GPUs are partitioned with a fixed MIG layout",
	ReasonNoMIG:        "GPUs are not in MIG mode",
	ReasonProfile:      "MIG profile not offered by this GPU model",
	ReasonNoSharing:    "GPUs are not shared (no time-slicing)",
	ReasonNoTimeSlices: "GPUs are shared by fractions, not time slices",
	ReasonGPUsBusy:     "not enough free GPU capacity",
	ReasonCPU:          "not enough free CPU",
	ReasonMemory:       "not enough free memory",
	ReasonSpread:       "spread limit reached in this domain",
	ReasonTaint:        "node has a taint the job does not tolerate",
}

var reasonCode = [...]string{
	ReasonNone: "", ReasonUnhealthy: "unhealthy", ReasonSpare: "spare", ReasonNoGPU: "no-gpu",
	ReasonModel: "model", ReasonStaticMIG: "static-mig", ReasonNoMIG: "no-mig", ReasonProfile: "mig-profile",
	ReasonNoSharing: "no-sharing", ReasonNoTimeSlices: "no-time-slices", ReasonGPUsBusy: "gpus",
	ReasonCPU: "cpu", ReasonMemory: "memory", ReasonSpread: "spread", ReasonTaint: "taint",
}

// String is the core's phrase for r.
func (r Reason) String() string { return reasonText[r] }

// Code is r's stable name for machines ("taint", "gpus", "model" ...).
func (r Reason) Code() string { return reasonCode[r] }

// filter is one reason a node holds no task, with the taint it names
// for ReasonTaint.
type filter struct {
	reason Reason
	detail string
}

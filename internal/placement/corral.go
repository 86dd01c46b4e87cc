package placement

import "github.com/corral-sched/corral/internal/model"

// Corral is corral's own packing policy (placeholder: FGD until tuned).
type Corral struct{ *FGD }

// NewCorral returns corral's policy given the workload mix.
func NewCorral(mix Mix) *Corral { return &Corral{NewFGD(mix)} }

func (*Corral) Name() string { return "corral" }

// CorralOnline learns the mix from the pods that have arrived.
type CorralOnline struct{ *FGD }

// NewCorralOnline returns corral's policy without prior knowledge.
func NewCorralOnline() *CorralOnline { return &CorralOnline{NewFGD(nil)} }

func (*CorralOnline) Name() string { return "corral-online" }

func (*CorralOnline) Observe(*model.Pod) {}

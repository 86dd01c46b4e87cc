package sim

import "github.com/corral-sched/corral/internal/sched"

// Defrag moves small checkpointing jobs out of the way of a large gang
// that waits only because free GPUs are scattered (the core's rule,
// sched.Defrag). Off unless Enabled.
type Defrag struct {
	Enabled bool
	// MaxMovesPerHour bounds the jobs moved in any hour (0: 4 per hour).
	MaxMovesPerHour int
	// MaxNodes bounds the nodes emptied for one gang (0: sched.DefaultDefragNodes).
	MaxNodes int
}

func (d Defrag) movesPerHour() int { return cmpOr(d.MaxMovesPerHour, 4) }
func (d Defrag) maxNodes() int     { return cmpOr(d.MaxNodes, sched.DefaultDefragNodes) }

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

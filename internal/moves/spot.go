package moves

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/workload"
)

// HoursPerMonth turns a monthly interruption share into a rate.
const HoursPerMonth = 730

// RatePerNodeHour is the interruption rate per node-hour at which a share
// of instances is interrupted in a month: -ln(1-share)/730.
func RatePerNodeHour(monthlyShare float64) float64 {
	if monthlyShare <= 0 {
		return 0
	}
	return -math.Log(1-min(monthlyShare, 0.999)) / HoursPerMonth
}

// spotFaults interrupts the spot nodes of f: for each, the time to its next
// interruption is exponential at rate; an interrupted node fails at once
// (its jobs keep their last periodic checkpoint: a two-minute notice is
// taken as too short to write one) and its capacity stays missing for an
// exponential time of mean outage, after which it comes back. The stream
// of each node depends on the seed and its name only.
func spotFaults(f *fleet.Fleet, rate float64, outage, horizon time.Duration, seed uint64) []workload.Fault {
	if rate <= 0 {
		return nil
	}
	var out []workload.Fault
	for _, n := range f.Nodes {
		if n.CapacityType() != fleet.CapacitySpot {
			continue
		}
		r := nodeRand(seed, n.Name)
		for t := expo(r, time.Duration(float64(time.Hour)/rate)); t < horizon; t += expo(r, time.Duration(float64(time.Hour)/rate)) {
			out = append(out, workload.Fault{At: t, Kind: workload.NodeFailure, Node: n.Name})
			t += max(expo(r, outage), time.Second)
			if t >= horizon {
				break
			}
			out = append(out, workload.Fault{At: t, Kind: workload.NodeRepair, Node: n.Name})
		}
	}
	workload.SortFaults(out)
	return out
}

func nodeRand(seed uint64, node string) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprint(h, "moves-spot\x00", node)
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// expo draws an exponential duration of the given mean, whole seconds.
func expo(r *rand.Rand, mean time.Duration) time.Duration {
	return time.Duration(r.ExpFloat64()*mean.Seconds()) * time.Second
}

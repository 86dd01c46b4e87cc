package packbench

import (
	"fmt"
	"strconv"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/placement"
)

// LivePolicy names the benchmark's policy that places every pod through
// gang.State.Place, the call that corral server and corral kube-scheduler
// make, on the state type they keep: what users run, not a lab policy.
const LivePolicy = "live"

// LiveDescription says in a line what LivePolicy measures.
const LiveDescription = "what corral server and kube-scheduler run: gang.State.Place, learning the mix online"

// live is the state the live path places on: a fleet of the benchmark's
// nodes in tie-break order, so that the fleet's order is the run's.
type live struct {
	state *gang.State
	order []int // fleet node index -> cluster node index
	count int
}

func newLive(nodes []placement.Node, order []int) (*live, error) {
	f := &fleet.Fleet{Nodes: make([]fleet.Node, len(order))}
	for i, n := range order {
		f.Nodes[i] = fleet.FromTrace(nodes[n])
	}
	st, err := gang.New(f)
	if err != nil {
		return nil, fmt.Errorf("live fleet: %w", err)
	}
	return &live{state: st, order: order}, nil
}

// placeLive places pod through the live path and mirrors its decision on
// the replay's cluster, whose Bind checks that it fits.
func (r *replay) placeLive(l *live, pod *placement.Pod) bool {
	l.count++
	p, ok := l.state.TryPlace(job.Single(strconv.Itoa(l.count), job.PodDemand(*pod)))
	if !ok {
		return false
	}
	t := p.Tasks[0]
	r.bind(pod, placement.Choice{Node: l.order[t.Node], GPUs: t.GPUs})
	return true
}

// Policies lists every policy the benchmark runs, in report order: the
// placement policies, then LivePolicy.
func Policies() []string { return append(placement.Names(), LivePolicy) }

// DescribePolicy says in a line what the named policy does.
func DescribePolicy(name string) string {
	if name == LivePolicy {
		return LiveDescription
	}
	return placement.Describe(name)
}

// CheckPolicy reports an unknown policy name.
func CheckPolicy(name string) error {
	if name == LivePolicy {
		return nil
	}
	if _, err := placement.New(name, placement.Env{}); err != nil {
		return fmt.Errorf("%w (or %s)", err, LivePolicy)
	}
	return nil
}

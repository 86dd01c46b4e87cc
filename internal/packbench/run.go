package packbench

import (
	"math/rand"

	"github.com/corral-sched/corral/internal/placement"
)

// Spec is one benchmark run: a trace, a policy and a seed.
type Spec struct {
	Trace  string // the pod file's name without .csv
	Nodes  []placement.Node
	Pods   []placement.Pod // the trace as read, untuned
	Policy string
	Seed   int64
}

// Record is the cluster after one pod attempt.
type Record struct {
	Arrived int64   // milli-GPU requested so far, failed pods included
	Used    int64   // milli-GPU allocated
	Frag    float64 // fragmented milli-GPU against the trace's typical mix
	Failed  bool    // this attempt's pod fit nowhere
}

// Trace is everything a run recorded.
type Trace struct {
	Spec     Spec
	Capacity int64 // cluster milli-GPU
	Records  []Record
}

// Run replays spec: it orders and tunes the pods, draws the node tie-break
// order, and places the pods one at a time with the policy, recording the
// cluster after every attempt. A pod that fits nowhere is dropped.
func Run(spec Spec) (*Trace, error) {
	rng, capacity, pods, err := arrivals(spec)
	if err != nil {
		return nil, err
	}
	nodes, order := nodeOrder(spec.Nodes, rng)
	mix := placement.TypicalMix(spec.Pods, TypicalPercent)
	r := newReplay(placement.NewCluster(nodes), order, mix)
	place, err := r.placer(spec, rng)
	if err != nil {
		return nil, err
	}
	records := make([]Record, len(pods))
	var arrived int64
	for i := range pods {
		arrived += pods[i].TotalGPUMilli()
		placed := place(&pods[i])
		records[i] = Record{Arrived: arrived, Used: r.cluster.UsedGPUMilli(), Frag: r.frag, Failed: !placed}
	}
	return &Trace{Spec: spec, Capacity: capacity, Records: records}, nil
}

// placer returns how the run places one pod: through the live path for
// LivePolicy, through the named placement policy otherwise.
func (r *replay) placer(spec Spec, rng *rand.Rand) (func(*placement.Pod) bool, error) {
	if spec.Policy == LivePolicy {
		live, err := newLive(r.cluster.Nodes, r.order)
		if err != nil {
			return nil, err
		}
		return func(pod *placement.Pod) bool { return r.placeLive(live, pod) }, nil
	}
	policy, err := placement.New(spec.Policy, placement.Env{Rand: rng, Mix: r.mix, Pods: spec.Pods})
	if err != nil {
		return nil, err
	}
	return func(pod *placement.Pod) bool { return r.place(policy, pod) }, nil
}

// replay is the cluster under one policy, with its fragmentation kept up to
// date node by node.
type replay struct {
	cluster  *placement.Cluster
	order    []int // node indices in tie-break order
	mix      placement.Mix
	nodeFrag []float64
	frag     float64
	feasible []int
}

func newReplay(c *placement.Cluster, order []int, mix placement.Mix) *replay {
	r := &replay{cluster: c, order: order, mix: mix, nodeFrag: make([]float64, len(c.Nodes))}
	for n := range c.Nodes {
		r.nodeFrag[n] = mix.NodeFrag(c, n)
		r.frag += r.nodeFrag[n]
	}
	return r
}

// place offers pod to the policy and binds its choice; false if no node fits.
func (r *replay) place(policy placement.Policy, pod *placement.Pod) bool {
	if o, ok := policy.(placement.Observer); ok {
		o.Observe(pod)
	}
	r.feasible = r.feasible[:0]
	for _, n := range r.order {
		if r.cluster.Fits(n, pod) {
			r.feasible = append(r.feasible, n)
		}
	}
	if len(r.feasible) == 0 {
		return false
	}
	r.bind(pod, policy.Place(r.cluster, pod, r.feasible))
	return true
}

// bind applies a choice and updates the fragmentation of its node.
func (r *replay) bind(pod *placement.Pod, ch placement.Choice) {
	r.cluster.Bind(*pod, ch)
	f := r.mix.NodeFrag(r.cluster, ch.Node)
	r.frag += f - r.nodeFrag[ch.Node]
	r.nodeFrag[ch.Node] = f
}

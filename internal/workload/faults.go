package workload

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// nodeRand is the random stream of one node in one fault process: it
// depends on the seed, the process and the node's name only, so adding a
// node or reordering the list leaves the other nodes' faults alone.
func nodeRand(seed uint64, process, node string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(process))
	h.Write([]byte{0})
	h.Write([]byte(node))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// SpotInterruptions gives each node a stream of spot notices: the time
// from the start, or from the end of the previous notice period (the node
// comes back as a fresh spot node at once), to the next notice is
// exponential with mean 1/ratePerNodeHour hours. Each notice gives notice
// warning before the node goes. Times are whole seconds in [0, horizon).
// A rate of 0 gives no faults; node names must be distinct.
func SpotInterruptions(nodes []string, ratePerNodeHour float64, notice, horizon time.Duration, seed uint64) ([]Fault, error) {
	if ratePerNodeHour < 0 || notice < 0 || horizon < 0 {
		return nil, fmt.Errorf("spot interruptions: rate %v per node-hour, notice %v, horizon %v: want none negative",
			ratePerNodeHour, notice, horizon)
	}
	if err := checkNodes(nodes); err != nil {
		return nil, fmt.Errorf("spot interruptions: %w", err)
	}
	if ratePerNodeHour == 0 {
		return nil, nil
	}
	mean := time.Duration(float64(time.Hour) / ratePerNodeHour)
	var out []Fault
	for _, n := range nodes {
		r := nodeRand(seed, SpotNotice, n)
		for t := exponential(r, mean); t < horizon; t += notice + exponential(r, mean) {
			out = append(out, Fault{At: t, Kind: SpotNotice, Node: n, Notice: notice})
		}
	}
	SortFaults(out)
	return out, nil
}

// NodeFailures gives each node alternating up and down periods: up time
// exponential with mean mtbf, then a NodeFailure, then a repair time
// exponential with mean mttr, then a NodeRepair (left out when it falls at
// or after horizon). Times are whole seconds in [0, horizon). An mtbf of 0
// gives no faults; node names must be distinct.
func NodeFailures(nodes []string, mtbf, mttr, horizon time.Duration, seed uint64) ([]Fault, error) {
	if mtbf < 0 || mttr < 0 || horizon < 0 {
		return nil, fmt.Errorf("node failures: mtbf %v, mttr %v, horizon %v: want none negative", mtbf, mttr, horizon)
	}
	if err := checkNodes(nodes); err != nil {
		return nil, fmt.Errorf("node failures: %w", err)
	}
	if mtbf == 0 {
		return nil, nil
	}
	var out []Fault
	for _, n := range nodes {
		r := nodeRand(seed, NodeFailure, n)
		for t := exponential(r, mtbf); t < horizon; t += exponential(r, mtbf) {
			out = append(out, Fault{At: t, Kind: NodeFailure, Node: n})
			t += exponential(r, mttr)
			if t >= horizon {
				break
			}
			out = append(out, Fault{At: t, Kind: NodeRepair, Node: n})
		}
	}
	SortFaults(out)
	return out, nil
}

// checkNodes rejects empty and repeated node names: a repeated name would
// repeat its faults.
func checkNodes(nodes []string) error {
	seen := make(map[string]bool, len(nodes))
	for i, n := range nodes {
		if n == "" || seen[n] {
			return fmt.Errorf("node %d: empty or repeated name %q", i, n)
		}
		seen[n] = true
	}
	return nil
}

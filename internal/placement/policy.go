package placement

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
)

// Policy picks a node and GPUs for a pod among the feasible nodes.
//
// feasible lists node indices in tie-break order (earliest wins among equal
// scores) and is never empty. A policy returns a Choice that fits.
type Policy interface {
	Name() string
	Place(c *Cluster, pod *Pod, feasible []int) Choice
}

// Observer is a policy that learns from every arriving pod, placed or not.
// Observe is called before Place for the same pod.
type Observer interface {
	Observe(pod *Pod)
}

// Env is what a policy may be built with.
type Env struct {
	Rand *rand.Rand // the run's random source (Random draws from it)
	Mix  Mix        // the workload's typical pods (fgd)
	Pods []Pod      // the whole workload, known in advance (corral)
}

// registry holds every policy: what it does, in a line, and how to build it.
var registry = map[string]struct {
	describe string
	build    func(Env) Policy
}{
	"random":        {"a feasible node at random (FGD paper baseline)", func(e Env) Policy { return &Random{rng: e.Rand} }},
	"dotprod":       {"Tetris: node and pod resource vectors least aligned (FGD paper baseline)", func(Env) Policy { return DotProd{} }},
	"clustering":    {"nodes already holding pods of the same GPU shape (FGD paper baseline)", func(Env) Policy { return Clustering{} }},
	"packing":       {"partly used GPUs first, then used nodes (FGD paper baseline)", func(Env) Policy { return Packing{} }},
	"bestfit":       {"the node left with the least CPU and GPU (FGD paper baseline)", func(Env) Policy { return BestFit{} }},
	"fgd":           {"fragmentation gradient descent, ATC'23 (knows the workload mix)", func(e Env) Policy { return NewFGD(e.Mix) }},
	"spread":        {"least allocated, as a default Kubernetes scheduler", func(Env) Policy { return Spread{} }},
	"corral":        {"corral: fragmentation counting copies and CPU, first-fit window (knows the mix)", func(e Env) Policy { return NewCorral(e.Pods) }},
	"corral-online": {"corral, learning the mix from the pods that have arrived", func(Env) Policy { return NewCorralOnline() }},
}

// Describe says in a line what the named policy does.
func Describe(name string) string { return registry[name].describe }

// Names lists the policies in the order reports show them.
func Names() []string {
	return []string{"random", "dotprod", "clustering", "packing", "bestfit", "fgd", "spread", "corral", "corral-online"}
}

// New builds the named policy.
func New(name string, env Env) (Policy, error) {
	entry, ok := registry[name]
	if !ok {
		known := append([]string(nil), Names()...)
		sort.Strings(known)
		return nil, fmt.Errorf("unknown policy %q (known: %s)", name, strings.Join(known, ", "))
	}
	return entry.build(env), nil
}

// argmax returns the first node of feasible with the highest score.
func argmax(feasible []int, score func(n int) int64) int {
	best, bestScore := feasible[0], score(feasible[0])
	for _, n := range feasible[1:] {
		if s := score(n); s > bestScore {
			best, bestScore = n, s
		}
	}
	return best
}

package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

// Policy decides which pending jobs start. Cycle runs whenever something
// happened (arrivals, completions) and starts jobs through the Sim.
type Policy interface {
	Name() string
	Describe() string
	StateOptions() gang.Options
	Cycle(s *Sim)
}

// policies are corral and the models of other systems: each peer at its
// documented best for GPU clusters (slurm-like, kueue-like, kube-default
// and kube-packed, volcano-like, kai-like), and the earlier models kept as labelled
// worst cases (slurm-exclusive, kueue-strict).
var policies = map[string]func() Policy{
	"corral":          func() Policy { return corralPolicy{} },
	"kube-default":    func() Policy { return newKubePolicy(false) },
	"kube-packed":     func() Policy { return newKubePolicy(true) },
	"slurm-like":      newSlurmPolicy,
	"slurm-exclusive": func() Policy { return slurmExclusivePolicy{} },
	"kueue-like":      newKueuePolicy,
	"kueue-strict":    func() Policy { return kueueStrictPolicy{} },
	"volcano-like":    newVolcanoPolicy,
	"kai-like":        newKAIPolicy,
}

// NewPolicy returns the named policy.
func NewPolicy(name string) (Policy, error) {
	f, ok := policies[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (known: %s)", name, strings.Join(PolicyNames(), ", "))
	}
	return f(), nil
}

// PolicyNames lists the policies in name order.
func PolicyNames() []string {
	names := make([]string, 0, len(policies))
	for n := range policies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// shapeKey names a job's demand and constraints, so that a cycle can skip
// jobs shaped like one that did not fit a moment ago.
func shapeKey(j *job.Job) string {
	return fmt.Sprint(j.Groups, j.Topology, j.MinMember, j.Preemptible && j.Runtime > 0)
}

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

var policies = map[string]func() Policy{
	"corral":       func() Policy { return corralPolicy{} },
	"kube-default": func() Policy { return kubePolicy{} },
	"slurm-like":   func() Policy { return slurmPolicy{} },
	"kueue-like":   func() Policy { return kueuePolicy{} },
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

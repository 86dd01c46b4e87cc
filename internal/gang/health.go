package gang

import (
	"fmt"

	"github.com/corral-sched/corral/internal/fleet"
)

// NodeIndex returns the index of the named node.
func (s *State) NodeIndex(name string) (int, error) {
	if i, ok := s.byName[name]; ok {
		return i, nil
	}
	return 0, fmt.Errorf("no node named %q", name)
}

// SetHealth records a node's health. An unhealthy or cordoned node gets no
// new work; what runs there is reported by Affected so that the caller can
// drain and requeue it.
func (s *State) SetHealth(name string, h fleet.Health) error {
	n, err := s.NodeIndex(name)
	if err != nil {
		return err
	}
	switch h {
	case fleet.Healthy, fleet.Unhealthy, fleet.Cordoned:
	default:
		return fmt.Errorf("node %s: unknown health %q", name, h)
	}
	s.noteHealth(n)
	s.fleet.Nodes[n].Health = h
	s.reindex(n)
	return nil
}

// Affected lists, in name order, the jobs with a task on the named node.
func (s *State) Affected(name string) []string {
	var out []string
	for _, j := range s.jobNames() {
		for _, t := range s.jobs[j].Tasks {
			if t.NodeName == name {
				out = append(out, j)
				break
			}
		}
	}
	return out
}

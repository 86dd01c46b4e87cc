package server

import (
	"fmt"
	"strconv"

	"github.com/corral-sched/corral/internal/eligible"
	"github.com/corral-sched/corral/internal/store"
)

// arrayText writes an array's indices as sbatch takes them back, when
// they are evenly spaced; its count otherwise.
func arrayText(a *store.Array) string {
	s := strconv.Itoa(a.Min)
	if a.Max != a.Min {
		s += "-" + strconv.Itoa(a.Max)
	}
	if a.Step > 1 {
		s += ":" + strconv.Itoa(a.Step)
	}
	if (a.Max-a.Min)/max(a.Step, 1)+1 != a.Count {
		s = fmt.Sprintf("%d tasks in %d-%d", a.Count, a.Min, a.Max)
	}
	if a.Limit > 0 {
		s += "%" + strconv.Itoa(a.Limit)
	}
	return s
}

// resolve finds the jobs a reference names, as scancel and scontrol
// take them: 17 is job 17, or every task of array 17 when 17 is an
// array's ID; 17_3 is task 3 of array 17. A job of another tenant is
// no job to one that is not an admin.
func (s *Server) resolve(tx *store.Tx, r eligible.Ref, who store.Tenant) ([]store.Job, error) {
	head, err := tx.Job(r.Job)
	if err != nil || (!who.Admin && head.Tenant != who.Name) {
		return nil, fmt.Errorf("no job %s", refText(r))
	}
	if head.ArrayJob != head.ID || head.Array == nil { // a job of its own, or a task named by its own ID
		if r.HasTask {
			return nil, fmt.Errorf("no job %s: %s is not a job array", refText(r), head.Name())
		}
		return []store.Job{head}, nil
	}
	var out []store.Job
	for id := head.ID; id < head.ID+uint64(head.Array.Count); id++ {
		j, err := tx.Job(id)
		if err != nil || j.ArrayJob != head.ID {
			continue
		}
		if !r.HasTask || j.ArrayIndex == r.Task {
			out = append(out, j)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no job %s: array %s has no task %d", refText(r), head.Name(), r.Task)
	}
	return out, nil
}

func refText(r eligible.Ref) string {
	if r.HasTask {
		return fmt.Sprintf("%s_%d", store.FormatID(r.Job), r.Task)
	}
	return store.FormatID(r.Job)
}

// resolveDeps parses a dependency and resolves the jobs it names to
// their IDs (every task of an array named by its ID).
func (s *Server) resolveDeps(text string, who store.Tenant) (eligible.Dependency, error) {
	d, err := eligible.ParseDependency(text)
	if err != nil || d.None() {
		return d, err
	}
	err = s.st.View(func(tx *store.Tx) error {
		for i, t := range d.Terms {
			for _, r := range t.Refs {
				jobs, err := s.resolve(tx, r, who)
				if err != nil {
					return fmt.Errorf("dependency %s: %w", t.Kind, err)
				}
				for _, j := range jobs {
					d.Terms[i].Add(j.ID, r.Delay)
				}
			}
		}
		return nil
	})
	return d, err
}

// resolveText resolves a job reference as the API's paths give it.
func (s *Server) resolveText(text string, who store.Tenant) ([]store.Job, error) {
	r, err := eligible.ParseRef(text)
	if err != nil {
		return nil, err
	}
	var jobs []store.Job
	err = s.st.View(func(tx *store.Tx) error {
		var err error
		jobs, err = s.resolve(tx, r, who)
		return err
	})
	return jobs, err
}

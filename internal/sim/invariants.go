package sim

import "fmt"

// checkInvariants, when set (by tests), is run after every moment of a
// replay; it panics on the first broken invariant.
var checkInvariants bool

// invariants checks what must hold after every moment: GPUs held within
// the fleet and use within what is held; every running job holds at least
// its minimum tasks (all of them unless it is elastic) and at most all of
// them; every tenant within its nominal quota plus what it borrows, and
// the cohort's total within the sum of nominal quotas.
func (s *Sim) invariants() {
	const eps = 1e-6
	if s.acct.allocated > s.acct.capacity+eps || s.acct.used > s.acct.allocated+eps || s.acct.used < -eps {
		panic(fmt.Sprintf("sim at %v: %.3f GPUs used, %.3f held of %.0f", s.now, s.acct.used, s.acct.allocated, s.acct.capacity))
	}
	for name, r := range s.running {
		tasks := 0
		for _, part := range r.parts {
			if p := s.state.Job(part); p != nil {
				tasks += len(p.Tasks)
			} else if s.gone[part] == nil {
				panic(fmt.Sprintf("sim at %v: %s runs on placement %s that does not exist", s.now, name, part))
			}
		}
		if tasks < r.a.Job.MinTasks() || tasks > r.a.Job.Tasks() {
			panic(fmt.Sprintf("sim at %v: %s runs %d tasks, wants %d..%d", s.now, name, tasks, r.a.Job.MinTasks(), r.a.Job.Tasks()))
		}
	}
	var used, nominal int64
	for _, q := range s.book.Queues() {
		spec, _ := s.book.Spec(q)
		u, own := s.book.Usage(q)[quotaFlavor], spec.Nominal[quotaFlavor]
		borrowed := s.book.Borrowed(q)[quotaFlavor]
		if u > own+borrowed {
			panic(fmt.Sprintf("sim at %v: tenant %s uses %d of its %d quota and borrows only %d", s.now, q, u, own, borrowed))
		}
		used += u
		nominal += own
	}
	if used > nominal {
		panic(fmt.Sprintf("sim at %v: tenants use %d, more than all quotas (%d)", s.now, used, nominal))
	}
}

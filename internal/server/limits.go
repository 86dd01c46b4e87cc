package server

import (
	"fmt"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// DefaultMaxGrace is the default of Config.MaxGrace: how long a stopped
// job may take to exit after SIGTERM before its whole cgroup is killed.
const DefaultMaxGrace = 30 * time.Second

// specFor is specOf, then the request brought within the limits the
// admin set for the server and for who: what was lowered or set is said
// in the spec's Adjusted.
func (s *Server) specFor(req api.JobRequest, who store.Tenant) (store.Spec, error) {
	spec, err := s.specOf(req)
	if err != nil {
		return spec, err
	}
	s.capGrace(&spec, who)
	return spec, nil
}

// graceCap is the longest grace period the tenant's jobs may have.
func (s *Server) graceCap(t store.Tenant) time.Duration {
	if t.MaxGrace > 0 {
		return t.MaxGrace
	}
	return s.cfg.MaxGrace
}

// capGrace lowers a grace period above the tenant's cap to the cap.
func (s *Server) capGrace(spec *store.Spec, who store.Tenant) {
	if c := s.graceCap(who); spec.Grace > c {
		spec.Adjusted = append(spec.Adjusted, fmt.Sprintf("grace %v lowered to %v, the longest the admin allows tenant %s", spec.Grace, c, who.Name))
		spec.Grace = c
	}
}

// graceOf is the grace period j's tasks get: its own, within its
// tenant's cap as the server knows it now (a job submitted before the
// cap was lowered, or before there was one, gets no more). The caller
// holds s.mu, or runs before Run.
func (s *Server) graceOf(j *store.Job) time.Duration {
	return min(j.Spec.Grace, s.graceCap(s.tenants[j.Tenant]))
}

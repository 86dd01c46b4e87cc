package main

import (
	"flag"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/server"
	"github.com/corral-sched/corral/internal/server/api"
)

// serverLimits are the limits the admin sets for every job of the
// server: no tenant can lift them.
type serverLimits struct {
	maxGrace time.Duration
}

func (l *serverLimits) register(fs *flag.FlagSet) {
	fs.DurationVar(&l.maxGrace, "max-grace", server.DefaultMaxGrace,
		"the longest grace period any job gets between SIGTERM and the SIGKILL of its whole cgroup, on a cancel, a preemption or its time limit (Slurm's KillWait); a longer --grace is lowered to it")
}

func (l serverLimits) apply(cfg *server.Config) {
	cfg.MaxGrace = l.maxGrace
}

// tenantLimits are a tenant's own limits, as the flags of corral server
// tenant give them.
type tenantLimits struct {
	maxGrace string
}

// tenantLimitFlags are the flags of tenantLimits, as set names them.
var tenantLimitFlags = []string{"--max-grace"}

func (l *tenantLimits) register(fs *flag.FlagSet) {
	fs.StringVar(&l.maxGrace, "max-grace", "", "the longest grace period the tenant's jobs get (30s; empty or 0s: the server's --max-grace)")
}

func (l tenantLimits) create(req *api.TenantRequest) {
	req.MaxGrace = l.maxGrace
}

// update sets in u what the flag name, given to set, changes.
func (l tenantLimits) update(name string, u *api.TenantUpdate) {
	switch name {
	case "max-grace":
		g := l.maxGrace
		u.MaxGrace = &g
	}
}

func (tenantLimits) names() string { return strings.Join(tenantLimitFlags, ", ") }

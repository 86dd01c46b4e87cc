package sim

import (
	"math"
	"sort"
	"time"
)

// Slurm's priority/multifactor settings the slurm-like model uses
// (https://slurm.schedmd.com/priority_multifactor.html): the default decay
// half-life and maximum age, fair share weighted above the other factors
// as in the page's configuration example, and the QOS factor used because
// the workload's job priorities stand for QOS levels.
const (
	slurmDecayHalfLife = 7 * 24 * time.Hour // PriorityDecayHalfLife=7-0 (default)
	slurmMaxAge        = 7 * 24 * time.Hour // PriorityMaxAge=7-0 (default)
	slurmWeightFS      = 10000              // PriorityWeightFairshare
	slurmWeightAge     = 1000               // PriorityWeightAge
	slurmWeightSize    = 1000               // PriorityWeightJobSize, PriorityFavorSmall=NO
	slurmWeightQOS     = 1000               // PriorityWeightQOS
)

// slurmPriority keeps each account's (tenant's) usage in GPU-hours,
// decayed with the half-life (TRESBillingWeights=GRES/gpu=1: a GPU-hour
// is the unit charged), and the GPUs each ran since the last cycle.
type slurmPriority struct {
	last      time.Duration
	usage     map[string]float64
	rate      map[string]float64
	maxQOS    int
	noPreempt failedAt
}

func newSlurmPriority() *slurmPriority {
	return &slurmPriority{usage: map[string]float64{}, rate: map[string]float64{}, noPreempt: failedAt{}}
}

// observe charges the usage of the interval since the last cycle at the
// rates that held in it (the integral of a decaying sum) and notes the
// rates from now on.
func (sp *slurmPriority) observe(s *Sim) {
	sp.advance(s.now)
	sp.rate = s.runningGPUs()
}

func (sp *slurmPriority) advance(now time.Duration) {
	dt := (now - sp.last).Hours()
	sp.last = now
	if dt <= 0 {
		return
	}
	hl := slurmDecayHalfLife.Hours()
	keep := math.Exp2(-dt / hl)
	for t := range sp.usage {
		sp.usage[t] *= keep
	}
	for t, gpus := range sp.rate {
		sp.usage[t] += gpus * hl / math.Ln2 * (1 - keep)
	}
}

// order lists the pending jobs by multifactor priority, highest first,
// then by arrival (submit time, then job id).
func (sp *slurmPriority) order(s *Sim) []*pendingJob {
	sp.advance(s.now)
	fs := sp.fairTree(s)
	for _, p := range s.pending {
		sp.maxQOS = max(sp.maxQOS, p.a.Job.Priority)
	}
	prio := make(map[*pendingJob]float64, len(s.pending))
	for _, p := range s.pending {
		prio[p] = sp.priority(s, p, fs[tenantOf(p.a)])
	}
	order := append([]*pendingJob(nil), s.pending...)
	sort.SliceStable(order, func(i, j int) bool {
		if prio[order[i]] != prio[order[j]] {
			return prio[order[i]] > prio[order[j]]
		}
		return order[i].a.At < order[j].a.At
	})
	return order
}

// priority is the weighted sum of the factors, each in [0, 1].
func (sp *slurmPriority) priority(s *Sim, p *pendingJob, fairshare float64) float64 {
	age := min(float64(s.now-p.a.At)/float64(slurmMaxAge), 1)
	size := min(demandGPUs(p.a)/s.acct.capacity, 1)
	qos := 0.0
	if sp.maxQOS > 0 {
		qos = float64(max(p.a.Job.Priority, 0)) / float64(sp.maxQOS)
	}
	return slurmWeightFS*fairshare + slurmWeightAge*age + slurmWeightSize*size + slurmWeightQOS*qos
}

// fairTree is the fair-share factor of each account under Fair Tree with
// one level of accounts (fair_tree.html): accounts ranked by level fair
// share, shares over usage (both normalised among siblings; no usage ranks
// first), the top one getting 1 and the last 1/n, ties sharing a rank.
// An account's shares are its tenant's share of the work, as corral's
// quota is.
func (sp *slurmPriority) fairTree(s *Sim) map[string]float64 {
	total := 0.0
	for _, u := range sp.usage {
		total += u
	}
	names := make([]string, 0, len(s.entitled))
	level := map[string]float64{}
	for t, share := range s.entitled {
		names = append(names, t)
		u := 0.0
		if total > 0 {
			u = sp.usage[t] / total
		}
		level[t] = math.Inf(1)
		if u > 0 {
			level[t] = share / u
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if level[names[i]] != level[names[j]] {
			return level[names[i]] > level[names[j]]
		}
		return names[i] < names[j]
	})
	out := map[string]float64{}
	rank := 0
	for i, t := range names {
		if i == 0 || level[t] != level[names[i-1]] {
			rank = i
		}
		out[t] = float64(len(names)-rank) / float64(len(names))
	}
	return out
}

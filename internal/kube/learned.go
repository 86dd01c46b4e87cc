package kube

import (
	"context"
	"log/slog"

	"github.com/corral-sched/corral/internal/placement"
)

// The packing policy learns the mix of pod shapes from the pods bound
// (gang.State.Learned). The scheduler keeps what it learned in the unit
// memory ConfigMap (Config.UnitMemoryConfigMap, key learnedMixKey)
// whenever the policy renews the mix it places by, and a replica that
// takes the lead starts from it: without it, the new leader's state learns
// the mix again from the bound pods in node order, and with several pod
// shapes may place single pods otherwise than the old leader would have.
// A leader change loses at most the binds since the last renewal: the new
// leader counts every pod bound when it starts as learned. A fleet built
// again keeps its state's mix the same way (keptCluster.build).

// learnedMixKey is the ConfigMap key of the learned mix; no unit's key
// ("group.", "pod.") or binding record's ("binding.") takes this form.
const learnedMixKey = "learned-mix"

// takeCarry gives the state the mix to carry on with, if any. A mix it
// refuses is logged, and the bound pods are learned as adopted.
func (k *keptCluster) takeCarry(log *slog.Logger) {
	if k.carry == nil {
		return
	}
	if err := k.state.Learn(*k.carry); err != nil {
		log.Warn("learned mix refused; learning it again from the bound pods", "err", err)
		k.known, k.knownAll = nil, false
	}
	k.carry = nil
}

// loadLearned reads the learned mix a leader kept; nil when none is.
func (m *memoryStore) loadLearned(ctx context.Context) (*placement.Learned, error) {
	var l placement.Learned
	if ok, err := m.readKey(ctx, learnedMixKey, &l); !ok || err != nil {
		return nil, err
	}
	return &l, nil
}

// saveLearned writes the learned mix.
func (m *memoryStore) saveLearned(ctx context.Context, l placement.Learned) error {
	return m.writeKey(ctx, learnedMixKey, l)
}

// restoreLearned has the next cycle's state carry on with the mix a former
// leader kept. Called as this replica starts leading.
func (s *Scheduler) restoreLearned(ctx context.Context) {
	if s.unitsStore == nil {
		return
	}
	l, err := s.unitsStore.loadLearned(ctx)
	if err != nil {
		s.log.Warn("learned mix not read back; learning it again from the bound pods", "err", err)
		return
	}
	if l == nil {
		return
	}
	s.kept.carry, s.kept.knownAll = l, true // it counts the pods bound until its last renewal
	s.learnedRenewed = l.Renewed
	s.log.Info("learned mix read back", "arrivals", l.Seen, "shapes", len(l.Shapes))
}

// persistLearned writes what the state learned from the bound pods when
// the policy renewed its mix since the last write; a failed write is
// tried again after the next cycle.
func (s *Scheduler) persistLearned(ctx context.Context) {
	l := s.kept.learned
	if s.unitsStore == nil || l.Seen == 0 || l.Renewed == s.learnedRenewed {
		return
	}
	if err := s.unitsStore.saveLearned(ctx, l); err != nil {
		s.log.Warn("learned mix", "err", err)
		return
	}
	s.learnedRenewed = l.Renewed
}

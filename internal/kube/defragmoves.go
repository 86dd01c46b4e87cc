package kube

import (
	"context"
	"slices"
	"time"
)

// The moves defragmentation made in the last hour bound the next ones
// (Config.DefragMovesPerHour). The scheduler keeps their times in the
// unit memory ConfigMap (Config.UnitMemoryConfigMap, key defragMovesKey)
// after each cycle that moved pods, and a replica that takes the lead
// starts from them: without it, a new leader would count no moves and
// could move its full hourly bound again at once.

// defragMovesKey is the ConfigMap key of the moves' times; no unit's key
// ("group.", "pod.") or binding record's ("binding.") takes this form.
const defragMovesKey = "defrag-moves"

// loadMoves reads the times of the moves a leader kept; nil when none.
func (m *memoryStore) loadMoves(ctx context.Context) ([]time.Time, error) {
	var moves []time.Time
	_, err := m.readKey(ctx, defragMovesKey, &moves)
	return moves, err
}

// saveMoves writes the times of the moves in the last hour.
func (m *memoryStore) saveMoves(ctx context.Context, moves []time.Time) error {
	return m.writeKey(ctx, defragMovesKey, moves)
}

// restoreMoves takes up the moves a former leader made in the last hour.
// Called as this replica starts leading; what cannot be read is logged,
// and the replica counts only its own moves.
func (s *Scheduler) restoreMoves(ctx context.Context) {
	if s.unitsStore == nil || !s.cfg.Defrag {
		return
	}
	moves, err := s.unitsStore.loadMoves(ctx)
	if err != nil {
		s.log.Warn("defragmentation moves not read back; the hourly bound counts this replica's only", "err", err)
		return
	}
	s.moved = recentMoves(moves, s.cfg.Now())
}

// persistMoves writes the moves of the last hour when a cycle moved pods;
// a failed write is tried again after the next cycle.
func (s *Scheduler) persistMoves(ctx context.Context) {
	if s.unitsStore == nil || !s.movedChanged {
		return
	}
	if err := s.unitsStore.saveMoves(ctx, s.moved); err != nil {
		s.log.Warn("defragmentation moves", "err", err)
		return
	}
	s.movedChanged = false
}

// recentMoves is moves after now less an hour, oldest first, filtered in
// place.
func recentMoves(moves []time.Time, now time.Time) []time.Time {
	out := moves[:0]
	for _, t := range moves {
		if t.After(now.Add(-time.Hour)) && !t.After(now) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

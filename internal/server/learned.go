package server

import (
	"encoding/json"

	"github.com/corral-sched/corral/internal/placement"
	"github.com/corral-sched/corral/internal/store"
)

// The packing policy learns the mix of jobs from the jobs it is offered
// (gang.State.Learned). The server keeps what it learned in the store
// whenever the policy renews the mix it places by, and when it stops, and
// gives it back to the core state of the next server on the store, so
// that a restart places as the old server would have: the mix is not
// learned again from the jobs found running (which it counts already;
// without a kept mix they are learned as the state adopts them). A crash
// loses at most the arrivals since the last renewal, whose weights count
// toward the next.

// restoreLearned gives the core state what the store keeps of the mix.
// Called by recover, before the state is rebuilt (which carries it on).
func (s *Server) restoreLearned() {
	var data []byte
	_ = s.st.View(func(tx *store.Tx) error { data = tx.LearnedMix(); return nil })
	if data == nil {
		return
	}
	var l placement.Learned
	if err := json.Unmarshal(data, &l); err != nil {
		s.log.Warn("the stored learned mix is unreadable; learning it again", "err", err)
		return
	}
	if err := s.state.Learn(l); err != nil {
		s.log.Warn("the stored learned mix is refused; learning it again", "err", err)
		return
	}
	s.learnedRenewed, s.learnedSeen, s.learnedCounts = l.Renewed, l.Seen, true
}

// persistLearned writes what the policy has learned when it renewed its
// mix since the last write, or, with all, when it saw any arrival since.
// A failed write is tried again after the next change.
func (s *Server) persistLearned(all bool) {
	l := s.state.Learned()
	if l.Renewed == s.learnedRenewed && (!all || l.Seen == s.learnedSeen) {
		return
	}
	data, err := json.Marshal(l)
	if err == nil {
		err = s.st.Update(func(tx *store.Tx) error { return tx.PutLearnedMix(data) })
	}
	if err != nil {
		s.log.Warn("keeping the learned mix", "err", err)
		return
	}
	s.learnedRenewed, s.learnedSeen = l.Renewed, l.Seen
}

package server

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/placement"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// TestRestartKeepsTheLearnedMix: the mix of job shapes the packing policy
// learned survives a restart of the server, exactly after a clean stop
// and as of its last renewal after a crash, and a rebuild of the core
// state (as a GPU's health change makes) keeps it too. Before, the new
// state learned the mix again from the jobs it found running alone.
func TestRestartKeepsTheLearnedMix(t *testing.T) {
	h := newHarness(t, 2)
	c := h.tenant("alice", 0)
	var long string
	for _, r := range []api.JobRequest{
		{GPUs: 1, Command: []string{"true"}},
		{Share: 0.5, Command: []string{"true"}},
		{GPUs: 2, CPU: 2, Command: []string{"true"}},
		{Share: 0.25, CPU: 1, Command: []string{"true"}},
		{GPUs: 1, CPU: 1.5, Command: []string{"sleep", "60"}},
	} {
		j := h.submit(c, r)
		h.waitState(c, j.ID, map[bool]store.State{true: store.Running, false: store.Succeeded}[r.CPU == 1.5], 20*time.Second)
		long = j.ID
	}
	before := learnedOf(h)
	if before.Seen != 5 || len(before.Shapes) != 5 {
		t.Fatalf("learned %d arrivals of %d shapes before the restart, want 5 of 5", before.Seen, len(before.Shapes))
	}

	h.srv.mu.Lock()
	err := h.srv.rebuild()
	h.srv.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if got := learnedOf(h); !reflect.DeepEqual(got, before) {
		t.Errorf("a rebuilt state learned %+v, want %+v", got, before)
	}

	h = restart(t, h)
	if got := learnedOf(h); !reflect.DeepEqual(got, before) {
		t.Errorf("after a restart the server learned %+v, want %+v", got, before)
	}
	h.waitState(c, long, store.Running, 20*time.Second) // adopted, not learned again

	h.crash()
	srv, err := New(Config{Store: h.st, GPUs: fakeGPUs(2), StateDir: h.srv.cfg.StateDir, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h = startHarness(t, srv, h.st)
	got := learnedOf(h)
	if got.Renewed != before.Renewed || !reflect.DeepEqual(got.Mix, before.Mix) {
		t.Errorf("after a crash the server places by %+v (renewed at %d), want the mix of the last renewal %+v (at %d)", got.Mix, got.Renewed, before.Mix, before.Renewed)
	}
}

func learnedOf(h *harness) placement.Learned {
	h.srv.mu.Lock()
	defer h.srv.mu.Unlock()
	return h.srv.state.Learned()
}

// TestUnreadableLearnedMixIsLearnedAgain: a learned mix in the store that
// no server wrote (a hand-edited or damaged store) is logged and set
// aside: the server starts, learns the mix again from what it is
// offered, and writes a good one.
func TestUnreadableLearnedMixIsLearnedAgain(t *testing.T) {
	for name, stored := range map[string]string{
		"not JSON":        "{not json",
		"refused by core": `{"seen":1,"renewed":2,"shapes":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir, st := tempStore(t)
			if err := st.Update(func(tx *store.Tx) error { return tx.PutLearnedMix([]byte(stored)) }); err != nil {
				t.Fatal(err)
			}
			srv, err := New(Config{Store: st, GPUs: fakeGPUs(1), StateDir: filepath.Join(dir, "tasks"), Interval: 100 * time.Millisecond})
			if err != nil {
				t.Fatalf("a bad stored mix kept the server from starting: %v", err)
			}
			h := startHarness(t, srv, st)
			if got := learnedOf(h); got.Seen != 0 {
				t.Fatalf("the server took a bad stored mix: %+v", got)
			}
			c := h.tenant("alice", 0)
			j := h.submit(c, api.JobRequest{GPUs: 1, Command: []string{"true"}})
			h.waitState(c, j.ID, store.Succeeded, 20*time.Second)
			if got := learnedOf(h); got.Seen != 1 {
				t.Errorf("learned %d arrivals after one job, want 1", got.Seen)
			}
			h.stop(false)
			var kept []byte
			_ = st.View(func(tx *store.Tx) error { kept = tx.LearnedMix(); return nil })
			if string(kept) == stored {
				t.Error("the bad stored mix was not replaced by the learned one")
			}
		})
	}
}

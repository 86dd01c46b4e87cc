package server

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/store"
)

// BenchmarkCycleFullMachine measures one scheduling cycle over n waiting
// jobs while every GPU is taken: ordering, quota checks, and one placement
// attempt per job shape.
func BenchmarkCycleFullMachine(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("waiting=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			st, err := store.Open(filepath.Join(dir, "corral.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			srv, err := New(Config{Store: st, GPUs: fakeGPUs(8), StateDir: filepath.Join(dir, "tasks"), Depth: n})
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				// Waiting jobs that cannot start: the machine is taken below.
				srv.waiting[uint64(i+1)] = store.Job{ID: uint64(i + 1), Tenant: fmt.Sprint("t", i%4), State: store.Pending,
					Spec: store.Spec{GPUs: 1 + i%4, Tasks: 1, Priority: i % 3, Command: []string{"true"}}}
			}
			blocker := store.Job{ID: 1 << 40, Spec: store.Spec{GPUs: 8, Tasks: 1}}
			if _, ok := srv.state.TryPlace(gangJob(&blocker)); !ok {
				b.Fatal("blocker does not fit")
			}
			begin := time.Now()
			for b.Loop() {
				srv.cycle()
			}
			b.ReportMetric(float64(n*b.N)/time.Since(begin).Seconds(), "jobs-considered/s")
		})
	}
}

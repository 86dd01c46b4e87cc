package sched

import (
	"fmt"
	"testing"
)

// BenchmarkCycle decides 2,000 pending 1- to 4-GPU units of four queues
// on a 1,000-node fleet a quarter full; the fleet is rebuilt (untimed)
// before every cycle, as a face hands a fresh snapshot each time.
func BenchmarkCycle(b *testing.B) {
	t := &testing.T{}
	queues := []string{"q0", "q1", "q2", "q3"}
	build := func() *Snapshot {
		w := newWorld(t, 1000, 8, quota("q0", 2000), quota("q1", 2000), quota("q2", 2000), quota("q3", 2000))
		for i := range 2000 {
			w.run(gpuJob(fmt.Sprintf("r%d", i), 1, 1, 0), queues[i%4], noTime, true)
		}
		for i := range 2000 {
			w.submit(gpuJob(fmt.Sprintf("p%d", i), 1, 1+i%4, i%3), queues[i%4])
		}
		return w.snapshot(Config{Preemption: true, FairShare: true, Attempts: 2000})
	}
	var starts int
	for b.Loop() {
		b.StopTimer()
		snap := build()
		b.StartTimer()
		starts += len(Cycle(snap).Starts)
	}
	b.ReportMetric(float64(b.N)*2000/b.Elapsed().Seconds(), "units/s")
	b.ReportMetric(float64(starts)/float64(b.N), "starts/cycle")
}

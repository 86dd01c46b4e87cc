package gang

import (
	"fmt"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

func benchFleet(b *testing.B, nodes int, mig fleet.MIGMode) *State {
	b.Helper()
	f, err := fleet.Synthetic{Nodes: nodes, MIG: mig}.Build()
	if err != nil {
		b.Fatal(err)
	}
	return newState(b, f)
}

// BenchmarkPlaceSingleGPU places and releases 1-GPU tasks on a 10,000-node
// fleet kept half full.
func BenchmarkPlaceSingleGPU(b *testing.B) {
	s := benchFleet(b, 10000, fleet.MIGNone)
	names := make([]string, 40000)
	jobs := make([]*job.Job, len(names))
	for i := range names {
		names[i] = fmt.Sprintf("j%d", i)
		jobs[i] = &job.Job{Name: names[i], Groups: []job.Group{{Name: "t", Count: 1, Task: job.Demand{GPUs: 1, CPUMilli: 1000, MemoryMiB: 1024}}}}
	}
	for i := range jobs {
		if _, u := s.Place(jobs[i]); u != nil {
			b.Fatal(u)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := (i * 7919) % len(jobs)
		if err := s.Release(names[k]); err != nil {
			b.Fatal(err)
		}
		if _, u := s.Place(jobs[k]); u != nil {
			b.Fatal(u)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// BenchmarkPlaceGang512 places a 512-GPU gang in one block on a 10,000-node
// fleet at 70% occupancy, and releases it.
func BenchmarkPlaceGang512(b *testing.B) {
	s := benchFleet(b, 10000, fleet.MIGNone)
	// Fill 70% with 1..8-GPU tasks so that free space is fragmented.
	for i, used := 0, 0; used < 56000; i++ {
		g := 1 + (i*37)%8
		j := &job.Job{Name: fmt.Sprintf("f%d", i), Groups: []job.Group{{Name: "t", Count: 1, Task: job.Demand{GPUs: g}}}}
		if _, u := s.Place(j); u != nil {
			break
		}
		used += g
	}
	gang := &job.Job{Name: "gang", Groups: []job.Group{{Name: "w", Count: 64, Task: job.Demand{GPUs: 8}}},
		Topology: []job.Constraint{{Level: "block", Required: true}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, u := s.Place(gang)
		if u != nil {
			continue
		}
		_ = p
		if err := s.Release("gang"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/gang")
}

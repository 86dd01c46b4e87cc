package store

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkSubmit measures durable submissions: one transaction and one
// fsync each.
func BenchmarkSubmit(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	spec := Spec{Command: []string{"true"}, GPUs: 1, Tasks: 1}
	begin := time.Now()
	for b.Loop() {
		if _, err := s.Submit("t", spec, begin); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "submits/s")
}

// BenchmarkSubmitParallel measures submissions from 32 concurrent
// clients, which share transactions.
func BenchmarkSubmitParallel(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	spec := Spec{Command: []string{"true"}, GPUs: 1, Tasks: 1}
	b.SetParallelism(16)
	begin := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Submit("t", spec, begin); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "submits/s")
}

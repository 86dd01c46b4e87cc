package workload

import "testing"

// BenchmarkGenerate100k generates the 100,000-job scale preset.
func BenchmarkGenerate100k(b *testing.B) {
	spec := Spec100k()
	jobs := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w, err := Generate(spec, uint64(i))
		if err != nil {
			b.Fatal(err)
		}
		jobs += len(w.Arrivals)
	}
	b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
}

//go:build linux

package executor

import (
	"testing"
	"time"
)

// BenchmarkStartToDone measures what the executor adds to a task that does
// nothing: starting the supervisor and the task, and learning its end.
func BenchmarkStartToDone(b *testing.B) {
	dir := b.TempDir()
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		task, err := Start(Spec{ID: "bench", Command: []string{"true"}, Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		<-task.Done()
		if code := task.Result().ExitCode; code != 0 {
			b.Fatalf("exit code %d", code)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/task")
}

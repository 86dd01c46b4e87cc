package peers

import (
	"math"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

func TestRanksAndPearson(t *testing.T) {
	tests := []struct {
		x, y []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{[]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{[]float64{1, 2, 3}, []float64{1, 3, 2}, 0.5},
		// ties share the mean rank: (1.5, 1.5, 3) against (1, 2, 3)
		{[]float64{5, 5, 9}, []float64{1, 2, 3}, math.Sqrt(3) / 2},
	}
	for _, tt := range tests {
		if got := pearson(ranks(tt.x), ranks(tt.y)); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("spearman(%v, %v) = %g, want %g", tt.x, tt.y, got, tt.want)
		}
	}
	if got := ranks([]float64{3, 1, 3, 2}); got[0] != 3.5 || got[1] != 1 || got[2] != 3.5 || got[3] != 2 {
		t.Errorf("ranks = %v, want [3.5 1 3.5 2]", got)
	}
}

func TestCompare(t *testing.T) {
	var w workload.Workload
	for i, name := range []string{"a", "b", "c", "d"} {
		w.Arrivals = append(w.Arrivals, workload.Arrival{At: time.Duration(i) * time.Minute, Duration: time.Hour, Class: workload.Recorded,
			Job: &job.Job{Name: name, Groups: []job.Group{{Count: 1, Task: job.Demand{GPUs: 1}}}}})
	}
	at := func(min int) workload.Outcome {
		return workload.Outcome{Start: time.Duration(min) * time.Minute, Started: true}
	}
	model := map[string]workload.Outcome{"a": at(0), "b": at(3), "c": at(4), "d": at(5)} // waits 0, 2, 2, 2
	real := map[string]workload.Outcome{"a": at(0), "b": at(5), "c": at(4), "d": {}}     // waits 0, 4, 2; d never ran
	v := Compare(w, model, real)
	if v.Jobs != 3 || v.ModelStarted != 4 || v.RealStarted != 3 {
		t.Errorf("jobs %d, started %d and %d; want 3, 4, 3", v.Jobs, v.ModelStarted, v.RealStarted)
	}
	if math.Abs(v.Spearman-0.5) > 1e-12 {
		t.Errorf("spearman %g, want 0.5 (b and c swapped)", v.Spearman)
	}
	if v.ModelMeanWait != 80*time.Second || v.RealMeanWait != 2*time.Minute || math.Abs(v.MeanErr-(-1.0/3)) > 1e-12 {
		t.Errorf("mean waits %v and %v, error %g; want 1m20s, 2m, -1/3", v.ModelMeanWait, v.RealMeanWait, v.MeanErr)
	}
	if v.ModelP99Wait != 2*time.Minute || v.RealP99Wait != 4*time.Minute || v.P99Err != -0.5 {
		t.Errorf("p99 waits %v and %v, error %g; want 2m, 4m, -0.5", v.ModelP99Wait, v.RealP99Wait, v.P99Err)
	}
}

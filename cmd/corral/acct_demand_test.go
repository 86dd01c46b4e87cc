package main

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
)

// Accounting records become the planner's hourly demand: GPUs held on
// average in each hour, per model.
func TestHourlyDemandFromRecords(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 10, 30, 0, 0, time.UTC)
	recs := []api.Record{
		{GPUModel: "H100-80GB", GPUs: 2, Start: t0, End: t0.Add(90 * time.Minute)},               // 10:30-12:00
		{GPUModel: "H100-80GB", GPUs: 0.5, Start: t0.Add(time.Hour), End: t0.Add(2 * time.Hour)}, // 11:30-12:30
		{GPUModel: "L4", GPUs: 1, Start: t0.Add(2 * time.Hour), End: t0.Add(3 * time.Hour)},      // 12:30-13:30
	}
	var b strings.Builder
	if err := writeHourlyDemand(&b, recs); err != nil {
		t.Fatal(err)
	}
	want := `hour,gpu_model,gpus
0,H100-80GB,1.0000
0,L4,0.0000
1,H100-80GB,2.2500
1,L4,0.0000
2,H100-80GB,0.2500
2,L4,0.5000
3,H100-80GB,0.0000
3,L4,0.5000
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

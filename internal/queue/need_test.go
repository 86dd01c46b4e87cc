package queue

import (
	"errors"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/job"
)

func TestJobMilli(t *testing.T) {
	mig := func(d job.Demand) (int64, error) {
		switch {
		case d.MIG == "1g.10gb":
			return 143, nil // 1 of 7 slices
		case d.Shares > 0:
			return 1000 / 4, nil // four shares per GPU
		}
		return 0, errors.New("unknown profile")
	}
	j := &job.Job{Name: "j", Groups: []job.Group{
		{Name: "whole", Count: 2, Task: job.Demand{GPUs: 4}},
		{Name: "milli", Count: 3, Task: job.Demand{GPUMilli: 250}},
		{Name: "mig", Count: 7, Task: job.Demand{MIG: "1g.10gb"}},
		{Name: "shares", Count: 2, Task: job.Demand{Shares: 1}},
		{Name: "cpu", Count: 5, Task: job.Demand{CPUMilli: 4000}},
	}}
	got, err := JobMilli(j, mig)
	if want := int64(2*4000 + 3*250 + 7*143 + 2*250); err != nil || got != want {
		t.Errorf("JobMilli = %d, %v, want %d", got, err, want)
	}
	if _, err := JobMilli(j, nil); err == nil || !strings.Contains(err.Error(), `group "mig": no fraction for a MIG 1g.10gb task`) {
		t.Errorf("JobMilli without a fraction: %v", err)
	}
	j.Groups = append(j.Groups, job.Group{Name: "mem", Count: 1, Task: job.Demand{GPUMemoryMiB: 1 << 10}})
	if _, err := JobMilli(j, mig); err == nil || !strings.Contains(err.Error(), "1024 MiB GPU memory") {
		t.Errorf("JobMilli with a failing fraction: %v", err)
	}
}

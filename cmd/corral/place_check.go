package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/job"
)

// checkCatalog refuses jobs that name a GPU model the catalog does not
// know, or a MIG profile none of their models has: a mistake in the file,
// not a job that does not fit.
func checkCatalog(path string, jobs []*job.Job) error {
	var errs []error
	for _, j := range jobs {
		if j.ByGPUMemory != nil {
			if err := checkDemand(job.Demand{Models: j.ByGPUMemory.Models}); err != nil {
				errs = append(errs, fmt.Errorf("%s: job %q, byGPUMemory: %s", path, j.Name, strings.TrimPrefix(err.Error(), "gpu: ")))
			}
		}
		for _, g := range j.Groups {
			if err := checkDemand(g.Task); err != nil {
				errs = append(errs, fmt.Errorf("%s: job %q, group %q: %s", path, j.Name, g.Name, strings.TrimPrefix(err.Error(), "gpu: ")))
			}
		}
	}
	return errors.Join(errs...)
}

func checkDemand(d job.Demand) error {
	var models []*gpu.Model
	for _, name := range d.Models {
		m, err := gpu.Lookup(name)
		if err != nil {
			return err
		}
		models = append(models, m)
	}
	if d.MIG == "" {
		return nil
	}
	if len(models) == 0 {
		if gpu.LeastProfileMilli(d.MIG) == 0 {
			return fmt.Errorf("no GPU model in the catalog has the MIG profile %q", d.MIG)
		}
		return nil
	}
	for _, m := range models {
		if _, err := m.ProfileIndex(d.MIG); err == nil {
			return nil
		}
	}
	_, err := models[0].ProfileIndex(d.MIG)
	return err
}

package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/workload"
)

// recordedInput reads a jobs file or sacct output (--workload jobs FILE,
// --workload sacct FILE) and the fleet to replay it on: --fleet, else
// --nodes synthetic nodes.
func recordedInput(o simOptions) (*fleet.Fleet, workload.Workload, string, error) {
	if o.workloadPath == "" {
		return nil, workload.Workload{}, "", fmt.Errorf("--workload %s needs a file: corral sim --workload %s FILE", o.workloadKind, o.workloadKind)
	}
	jobs, note, err := readRecorded(o.workloadKind, o.workloadPath)
	if err != nil {
		return nil, workload.Workload{}, "", err
	}
	var f *fleet.Fleet
	if o.fleetPath != "" {
		f, err = fleet.Load(o.fleetPath)
	} else {
		f, err = fleet.Synthetic{Nodes: o.nodes, MIG: fleet.MIGDynamic}.Build()
	}
	if err != nil {
		return nil, workload.Workload{}, "", err
	}
	if len(jobs.Workload.Arrivals) == 0 {
		return nil, workload.Workload{}, "", errors.New(o.workloadPath + ": no jobs to replay" + note)
	}
	return f, jobs.Workload, fmt.Sprintf("%s workload %s%s", o.workloadKind, o.workloadPath, note), nil
}

// readRecorded reads a jobs file (kind "jobs") or sacct -P output ("sacct").
func readRecorded(kind, path string) (*workload.Jobs, string, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("workload: %w", err)
	}
	defer file.Close()
	if kind == "sacct" {
		j, skipped, err := workload.ReadSacct(file, path)
		return j, " (" + skipped.String() + ")", err
	}
	j, err := workload.ReadJobs(file, path)
	return j, "", err
}

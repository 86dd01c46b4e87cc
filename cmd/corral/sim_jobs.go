package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/workload"
)

// recordedInput reads a jobs file or sacct output (--workload jobs FILE,
// --workload sacct FILE) and the fleet to replay it on (replayFleet).
func recordedInput(o simOptions) (*fleet.Fleet, workload.Workload, string, error) {
	jobs, label, err := recordedJobs(o)
	if err != nil {
		return nil, workload.Workload{}, "", err
	}
	f, on, err := replayFleet(o, jobs.Machines)
	if err != nil {
		return nil, workload.Workload{}, "", err
	}
	return f, jobs.Workload, label + on, nil
}

// recordedJobs reads the jobs of --workload jobs FILE or sacct FILE, and
// a label saying where they came from.
func recordedJobs(o simOptions) (*workload.Jobs, string, error) {
	if o.workloadPath == "" {
		return nil, "", fmt.Errorf("--workload %s needs a file: corral sim --workload %s FILE", o.workloadKind, o.workloadKind)
	}
	jobs, note, err := readRecorded(o.workloadKind, o.workloadPath)
	if err != nil {
		return nil, "", err
	}
	if len(jobs.Workload.Arrivals) == 0 {
		return nil, "", errors.New(o.workloadPath + ": no jobs to replay" + note)
	}
	return jobs, fmt.Sprintf("%s workload %s%s", o.workloadKind, o.workloadPath, note), nil
}

// replayFleet is the fleet a recorded workload is replayed on: --fleet,
// else --nodes synthetic nodes, else the machines the file says the jobs
// ran on (its fleet line, which corral acct --jobs writes). With none of
// these it refuses to guess: a history replayed on a fleet it never ran
// on says nothing about the one it did. on says so when
// the file chose, for the header.
func replayFleet(o simOptions, ran *workload.Machines) (f *fleet.Fleet, on string, err error) {
	switch {
	case o.fleetPath != "":
		f, err = fleet.Load(o.fleetPath)
	case o.nodesSet:
		f, err = fleet.Synthetic{Nodes: o.nodes, MIG: fleet.MIGDynamic}.Build()
	case ran != nil:
		f, err = ran.Fleet()
		if err != nil {
			err = fmt.Errorf("%s: the fleet it ran on: %w", o.workloadPath, err)
		}
		on = " (on the machines it ran on: " + ran.String() + ")"
	default:
		return nil, "", usageErrorf("%s does not say which machines its jobs ran on (corral acct --jobs writes a %q line): give --fleet FILE or --nodes N",
			o.workloadPath, workload.FleetLinePrefix)
	}
	return f, on, err
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

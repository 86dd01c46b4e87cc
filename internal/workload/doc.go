// Package workload produces the input of a discrete-event simulation: a
// time-ordered list of job arrivals, each with the true time it needs to
// run, and fault processes (spot notices, node failures and repairs). It
// only produces data; it schedules nothing.
//
// Arrivals come from the openb trace (ReadOpenbTimed, then FromOpenb) or
// from a recorded jobs file (ReadJobs, the format WriteJobs writes and
// corral acct --jobs exports), from Slurm's sacct -P output (ReadSacct), or
// from a generator (Generate over a GenSpec such as DefaultFourTenants or
// Spec100k). Faults come from SpotInterruptions and NodeFailures. All
// randomness comes from a seed given as input (math/rand/v2 PCG), so equal
// inputs give equal workloads.
//
// It imports job, model, fleet, gpu, quantity and slurmfmt only; it must not import os, net, a clock
// (time.Now) or the global math/rand functions, nor any scheduling package.
// Start with Workload in workload.go, then Generate in generate.go and the
// presets in presets.go.
package workload

// Package packbench runs the packing benchmark of the FGD paper (ATC'23,
// "Beware of Fragmentation") on openb-style traces: a static fill of a
// cluster, one pod at a time, no departures, with the workload tuned to 1.3x
// the cluster's GPU capacity.
//
// Run replays one (trace, policy, seed) exactly as the authors' artifact
// does, drawing from Go's math/rand Go-1 source in the same order; Grid runs
// many in parallel; Summarise bins the records by arrived percentage;
// Bounds (bounds.go) finds, per trace, the LP bound at x = 100 and an
// offline packing to compare the policies with.
//
// It imports model, placement and bound, and fleet, gang and job for the
// live policy (live.go); it performs no I/O. Start with Run.
package packbench

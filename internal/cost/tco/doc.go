// Package tco compares the monthly cost of running the same work on
// different platforms: a managed training service, self-run Kubernetes with
// the default scheduler or with corral, an HPC cluster with whole-node
// allocation.
//
// A Profile (profiles.yaml, embedded; every default there is an assumption
// to edit, with its reasoning) gives a platform's premium or discount on
// compute and its fixed monthly costs. Input gives what the platform's
// scheduling makes of the work: GPU-hours bought in a month and mean and
// p99 waits, as a simulation of the same work under that platform's policy
// reports them. Compare returns one row per platform: compute, storage and
// networking, operations, tools and total, beside the waits.
//
// Everything is in tco.go. The package performs no I/O: callers read files
// and pass their bytes to Parse.
package tco

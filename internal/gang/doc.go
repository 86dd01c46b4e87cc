// Package gang places jobs — gangs of task groups — on a fleet with a
// topology tree: all of a gang's tasks in one decision or none, in the
// tightest domain that holds them, spanning as few domains as possible at
// each level, with whole GPUs, MIG slices and shared GPUs side by side.
//
// State is the allocation of one fleet (state.go); Place decides and applies
// a job (place.go) and Release frees it. Placement is exact for gangs of one
// task shape: it reports "does not fit" only when no placement exists, and
// then says why per level (reasons.go). Single tasks take an indexed fast
// path (fast.go) that picks the same node as the general search for whole
// GPUs. Nothing here reads a clock or a random source; equal inputs give
// equal decisions.
//
// It imports internal/fleet, internal/job and internal/gpu only. Start with
// State in state.go, then Place in place.go.
package gang

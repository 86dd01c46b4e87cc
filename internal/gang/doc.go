// Package gang places jobs — gangs of task groups — on a fleet with a
// topology tree: all of a gang's tasks in one decision or none, in the
// tightest domain at the innermost level that holds them all, with whole
// GPUs, MIG slices and shared GPUs side by side. Below that domain a gang
// is split greedily over the fewest children at each step (the roomiest
// first, then the tightest that holds the rest); against an exhaustive
// search on small fleets its span exceeds the minimum by at most one domain
// at the level just inside the common domain and at most two anywhere
// (brute_test.go measures it).
//
// State is the allocation of one fleet (state.go); Place decides and applies
// a job (place.go) and Release frees it. Placement is exact for gangs of one
// task shape: it reports "does not fit" only when no placement exists, and
// then says why per level (reasons.go). A single task of whole GPUs, a
// share or CPU only is placed by corral's packing policy
// (internal/placement's Corral, learning the mix of task shapes from the
// jobs offered: pack.go), among the open nodes of
// the most used domains that can take it; MIG slices and whole-node tasks
// take an indexed fast path (fast.go). Adopt records work that already
// runs somewhere (adopt.go). Nothing here reads a clock or a random source;
// equal inputs give equal decisions.
//
// What is left on every node and GPU (CPU, memory, thousandths of each
// GPU) is kept once, in a placement.Cluster (State.left) that the gang
// search and the packing policy both read and the state writes as it
// places and releases tasks; the state keeps beside it only what the
// policy does not model: which GPUs are held whole and the MIG layouts.
// A what-if saves and restores the store's nodes with its own (tx.go).
//
// It imports internal/fleet, internal/job, internal/gpu and
// internal/placement only. Start with State in state.go, then Place in
// place.go.
package gang

// Package placement decides where one pod goes: which node and which GPUs.
//
// A Cluster holds the mutable state of a fleet (CPU, memory and milli-GPU
// left on every GPU). Feasible filters nodes; a Policy scores the feasible
// ones and picks a node and GPUs; Cluster.Bind applies the choice. Ties are
// broken by a rank order that the caller supplies, and any randomness comes
// from a *rand.Rand the caller seeds: equal inputs give equal placements.
//
// The policies of the ATC'23 FGD paper (random, dotprod, clustering,
// packing, bestfit, fgd) are ported score for score, including their integer
// truncation; spread is what a default Kubernetes scheduler does; corral and
// corral-online are corral's own. Fragmentation (frag.go) is measured against
// a Mix of typical pods; corral also keeps hosts for pod shapes that are
// running out of them (guard.go), which the typical mix cannot see.
//
// Scores are kept between placements: the ported policies' per node until
// it changes (cache.go), corral's per node state, so that nodes in one
// state, and a renewed mix, are scored once (states.go).
//
// Node and Pod (types.go) are a node and a pod in the policies' terms;
// internal/openb reads them from the openb traces, fleet.Node.PlacementNode
// and job.PodDemand convert to and from the scheduler's own.
//
// This package performs no I/O and imports no other corral package. Start
// with types.go and cluster.go, then policy.go.
package placement

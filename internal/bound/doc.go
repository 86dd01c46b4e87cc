// Package bound says how well any placement of a set of pods could do on a
// cluster, so that an online packing policy's result can be set beside the
// best possible one.
//
// Compute takes the nodes and the pods that have arrived so far (known in
// full) and returns two amounts of allocated GPU milli, between which the
// best placement of any subset of the pods lies:
//
//   - UpperMilli is a proven upper bound: no placement allocates more. It is
//     the optimum of a linear-programming relaxation (pods grouped into
//     classes, nodes into types, with valid cuts for GPU sharing), read off
//     a dual-feasible solution, so it stays a bound even if the simplex
//     stops early or rounds badly.
//   - PackedMilli is what an offline heuristic actually packed (best fit in
//     a few pod orders, one of them guided by the LP optimum): a real,
//     feasible placement, so a lower bound on the optimum.
//
// Result turns both into "unallocated GPU %" figures for reports.
//
// The package imports only model and gonum (for a dense matrix inverse).
// Start reading at Compute in bound.go. The relaxation is grouped in
// classes.go, built in lp.go with the cuts of cuts.go, and solved in
// simplex.go; the heuristic is in pack.go and node.go.
package bound

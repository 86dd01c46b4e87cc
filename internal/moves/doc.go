// Package moves prices the five moves that cut a GPU bill by replaying one
// workload through the simulator once per move: each move alone against a
// baseline, then all of them together.
//
// The baseline is one autoscaled on-demand pool in which every task gets
// whole GPUs. The moves are:
//
//   - mig: inference tasks smaller than a GPU get a MIG slice of their size
//     (nodes in dynamic MIG mode);
//   - timeslice: notebooks get time-sliced shares of GPUs in a pool of
//     their own;
//   - split: training and fine-tuning in one pool, inference and notebooks
//     in another, each scaled on its own;
//   - spot: training and fine-tuning (preemptible, checkpointing) in a spot
//     pool whose nodes are interrupted at the catalog's published band for
//     the offer and whose interrupted capacity stays missing for a while;
//   - floor: the commitment the planner (internal/cost/plan) recommends,
//     once per term of Options.Terms and billed as the catalog's kind of
//     it says (internal/cost/commit): a discount (1- and 3-year savings
//     plans, reserved instances, committed use discounts) is planned on
//     the on-demand GPUs billed each hour in every pool and applied to the
//     baseline's bill after the fact, with no replay of its own; a
//     capacity commitment (a Capacity Block) is planned on the pool's
//     cards occupied and replayed as committed nodes that are always there
//     and paid every hour. Each level is checked against a brute-force
//     search of the same series, and each floor's coverage and
//     utilisation reported.
//
// Every replay is priced with the catalog (internal/cost/price), so each
// move's saving, what it costs in waits and lost work, and the catalog
// lines it used come from the replay and the catalog. Run (moves.go) is
// the entry point; setup.go builds each move's fleet and workload, spot.go
// its interruptions, floor.go its commitments and report.go the table.
package moves

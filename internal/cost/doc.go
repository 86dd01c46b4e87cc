// Package cost turns GPU-hours into money: it prices what a simulation (or
// a real cluster) bought and used against the price catalog.
//
// Bill (bill.go) takes Usage rows, one per pool, capacity type, GPU model,
// tenant and class, and returns the cost per pool, capacity type, tenant and
// class with GPU-hours bought, used and wasted, and the cost of each useful
// GPU-hour. It performs no I/O.
//
// The subpackages hold the rest: price is the catalog of instance prices
// with their sources, commit bills a commitment of either kind (a discount
// on usage, or capacity nodes to fill) hour by hour, plan sizes
// commitments from an hourly demand, tco compares the monthly cost of
// running the same work on different platforms, alloc bills real usage
// per tenant, queue or namespace with idle and shared cost allocated
// (OpenCost's method), and focus writes and checks such a bill as a FOCUS
// 1.2 dataset.
package cost

// Package commit bills GPU commitments the way providers bill them, hour
// by hour, and says how well they were used.
//
// A commitment is of one of two kinds:
//
//   - Discount: a billing discount on whatever matching usage runs in the
//     commitment's scope (GPU models or an instance family, a region), in
//     any node, up to the committed amount each hour. EC2 Savings Plans and
//     reserved instances, GCP committed use discounts and Azure
//     reservations and savings plans are of this kind; GCP says its
//     commitments "don't reserve zonal capacity". Unused commitment is paid
//     all the same.
//   - Capacity: nodes held for the buyer that are paid every hour and that
//     work must be placed on to be of use: EC2 Capacity Blocks for ML,
//     on-demand capacity reservations, GCP and Azure capacity reservations.
//
// The amount is GPUs (a reserved instance, a resource-based commitment) or
// dollars an hour at the committed rates (a Compute Savings Plan). Bill
// takes the hourly usage of each model and returns what was covered, what
// ran on demand above the commitment, the commitment left unused, and the
// two figures AWS Cost Explorer reports: coverage (the share of eligible
// usage the commitment covered) and utilisation (the share of the
// commitment used). A discount is applied to the usage after the fact, so
// Bill is its whole model; a capacity commitment's use depends on where the
// scheduler put the work, so Nodes bills one from what ran on its nodes.
//
// Best searches every level by brute force; the planner
// (internal/cost/plan) and corral sim --moves (internal/moves) are checked
// against it. The package is pure: no I/O, no clock, no imports of corral.
package commit

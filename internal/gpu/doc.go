// Package gpu is corral's catalog of GPU models and the MIG layout engine
// for one GPU.
//
// The catalog (catalog.go) gives each model corral knows its memory and, for
// MIG-capable models, its MIG profiles. Lookup finds a model by name, by a
// short alias ("H100") or by a GPU feature discovery product string
// ("NVIDIA-H100-80GB-HBM3").
//
// # Slot model
//
// A MIG-capable GPU is cut into memory slices (8, or 4 on the A30) and
// compute slices (7, or 4 on the A30). A profile such as 3g.40gb takes a
// run of consecutive memory slices (4 here) and some compute slices (3), and
// may only start at certain memory slices (0 or 4). Instances on one GPU
// may not share a memory slice, and their compute slices together may not
// exceed the GPU's. The profile tables, slice counts and valid starts
// ("placements") come from NVIDIA's MIG user guide, section "Supported MIG
// Profiles"; profile memory is the rounded figure in the profile's name.
// With these tables the compute budget never binds on its own: every set of
// instances with valid, disjoint memory slices fits in it (a test checks
// this), but Validate still checks it.
//
// # Layouts
//
// A Layout (layout.go) is the instances on one GPU, each idle or busy
// (running a task). Plan (plan.go) says how to host one more task of a
// profile: on an idle instance of that profile, or, when the GPU is
// reconfigured dynamically, on a new instance in free slices or in slices
// freed by destroying the fewest idle instances. Busy instances are never
// touched. Ties go to the choice that leaves the most room for future
// instances. Capacity counts exactly how many tasks of a profile a layout
// can take at once.
//
// The package uses only the standard library and imports no other corral
// package.
package gpu

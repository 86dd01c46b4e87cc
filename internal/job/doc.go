// Package job describes the work corral schedules: a Job is a gang of task
// groups, each task asking for whole GPUs, a MIG profile, or a share of one
// GPU (time-slices, a memory fraction or a milli-GPU fraction), plus CPU and
// memory, with topology constraints on where the tasks may land.
//
// It is plain data with validation; it imports only internal/placement,
// for benchmark pods as tasks (PodDemand).
// Start with Job in job.go.
package job

// Package scalebench is the driver of `corral bench scale`: it measures how
// fast internal/gang decides on a large synthetic fleet (10,000 nodes of 8
// GPUs by default) and judges the result against the scale targets.
//
// It runs three phases on one goroutine, timing only the Place and Release
// calls: a pod stream of single tasks (1-GPU pods placed by the live
// policy, the fragmentation-aware packing that corral server and corral
// kube-scheduler run through gang.State.Place, and MIG pods), 512-GPU gangs
// with a required block on a fragmented fleet, and a run of mixed gangs.
// One seed gives the same decisions on every run; only the times differ.
//
// It imports internal/fleet, internal/gang and internal/job and nothing
// above them: no command-line code, no server, no Kubernetes, no simulator.
// It reads no files and writes only to the io.Writer it is given; flag
// parsing, profiling and files are the command's (cmd/corral).
//
// Start with Options and Run (run.go); Result (result.go) holds every
// metric under its JSON name and Judge compares it with the targets;
// WriteTable and WriteJSON (report.go) print it. stream.go is the pod
// stream, gangs.go the two gang phases, tracker.go the bookkeeping of
// running jobs they share.
package scalebench

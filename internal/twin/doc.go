// Package twin replays one scripted workload through a face of corral and
// writes what the face decided, so that the core and every face can be
// held to the same transcript: the digital-twin tests.
//
// A script (testdata/*.txt) is a list of steps — one machine (GPUs of a
// model, time-sliced or in MIG mode), tenants with GPU quotas and
// cohorts, submitted jobs (gangs, shares of a GPU, MIG instances, with
// priorities), jobs that finish, the machine leaving ("down") and coming
// back ("up"), and "settle", which lets the face decide until nothing
// changes — then a line "----" and the expected transcript: after each
// settle, the jobs started and the jobs preempted since the last one,
// then the jobs still waiting, each group sorted by name. Core runs a
// script on internal/sched directly, and writes the transcripts
// (go test ./internal/twin -update); the simulator, the server and the
// Kubernetes face implement Face in their own tests (TestTwinSim,
// TestTwinServer, TestTwinKube) over the real thing.
//
// The scripts: tenants.txt (quotas, a gang's reservation, a priority
// preemption, fair share), cohort.txt (borrowing and reclaim in a cohort,
// a gang over quota, the machine leaving with all its work), shares.txt
// (time-sliced shares borrowed and reclaimed, the back-off before a
// reclaimed job borrows again), mig.txt (MIG instances cut on demand,
// fair share, a priority preemption).
//
// It imports internal/fleet, internal/gang, internal/gpu, internal/job,
// internal/queue and internal/sched only. Start with Run in twin.go.
package twin

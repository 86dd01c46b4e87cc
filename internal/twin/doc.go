// Package twin replays one scripted workload through a face of corral and
// writes what the face decided, so that the core and every face can be
// held to the same transcript: the digital-twin tests.
//
// A script (testdata/*.txt) is a list of steps — a fleet, tenants with GPU
// quotas, submitted jobs, jobs that finish, and "settle", which lets the
// face decide until nothing changes — then a line "----" and the expected
// transcript: after each settle, the jobs started and the jobs preempted
// since the last one, then the jobs still waiting, each group sorted by
// name. Core runs a script on internal/sched directly; the simulator, the
// server and the Kubernetes face implement Face in their own tests
// (TestTwinSim, TestTwinServer, TestTwinKube) over the real thing.
//
// It imports internal/fleet, internal/gang, internal/job, internal/queue
// and internal/sched only. Start with Run in twin.go.
package twin

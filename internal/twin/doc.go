// Package twin replays one scripted workload through a face of corral and
// writes what the face decided, so that the core and every face can be
// held to the same transcript: the digital-twin tests.
//
// A script (testdata/*.txt) is a list of steps — the machines (nodes of
// GPUs of a model, time-sliced or in MIG mode, in racks or not), tenants
// with GPU quotas and cohorts, submitted jobs (gangs, shares of a GPU,
// MIG instances, with priorities, packed in a rack), jobs that finish, a
// node or every node leaving ("down") and coming back ("up"), the face's
// process restarting on what it persisted ("restart": a crash of the
// server, a change of leader on Kubernetes; the transcript must not
// change), and "settle", which lets the face decide until nothing
// changes — then a line "----" and the expected transcript: after each
// settle, the jobs started, the jobs moved off a failed node (a gang whose
// tasks there went to a spare or free node while the rest ran on: a face
// that moves implements Mover) and the jobs preempted since the last one,
// then the jobs still waiting, each group sorted by name. A fleet may keep
// hot spares (spares=K: the last K nodes of each rack). Core runs a
// script on internal/sched directly, and writes the transcripts
// (go test ./internal/twin -update); the simulator, the server and the
// Kubernetes face implement Face in their own tests (TestTwinSim,
// TestTwinServer, TestTwinKube) over the real thing. The server runs one
// machine and skips scripts of several nodes (ErrOneMachine), and it and
// the Kubernetes face skip scripts with elastic jobs (ErrNoResize: they
// resize no running job; a face that does implements Resizer, and the
// transcript says which jobs grew and shrank at each settle); a face
// whose model differs on a script skips it, saying why (the Kubernetes
// face's kubeDiffers, empty now: it counts a time-sliced share on the
// GPU its binding names, AnnotationShareGPU, as the server pins it).
//
// The scripts: tenants.txt (quotas, a gang's reservation, a priority
// preemption, fair share), cohort.txt (borrowing and reclaim in a cohort,
// a restart, a gang over quota, the machine leaving with all its work),
// shares.txt (time-sliced shares borrowed and reclaimed, the back-off
// before a reclaimed job borrows again, kept across a restart), mig.txt
// (MIG instances cut on demand, fair share, a priority preemption),
// racks.txt (four nodes in two racks: gangs packed in a rack, a gang
// borrowing and reclaimed, a restart, one node failing and coming back),
// sharegang.txt (gangs of shared-GPU tasks on two nodes, started whole,
// a node failing under one), failover.txt (two racks with a hot spare
// each: gangs moved to the spare when a node under them fails, a gang
// stopped whole when its rack has nothing left, a single job queued again
// and placed anew), elastic.txt (an elastic service that grows while
// nothing waits, gives back the newest part it grew by to a job waiting
// for room, grows again, and keeps what it grew by when giving it back
// would not let a waiting gang start).
//
// It imports internal/fleet, internal/gang, internal/gpu, internal/job,
// internal/queue and internal/sched only. Start with Run in twin.go.
package twin

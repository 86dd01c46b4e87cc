// Package sched is corral's scheduling cycle, the one every face runs.
//
// Cycle takes a Snapshot — the fleet's allocation (a gang.State with every
// running unit placed under its name), the quota ledger (a queue.Book with
// every running unit admitted), the running units, the pending units and
// the time — and returns Decisions as data: the units to start with their
// placements, the running units to preempt and for whom, the reservations
// held for units that wait for room, and the reason every other unit
// waits. A face (corral server, corral kube-scheduler) only turns its world
// into a Snapshot and applies the Decisions; it holds no policy.
//
// The cycle is pure: no I/O, no clock, no goroutines, no randomness, and no
// output in map order. It changes the Snapshot's State and Book exactly as
// its Decisions say (started units are placed and admitted), so that the
// face applies the same decisions the cycle saw.
//
// Memory (memory.go) is what the scheduler keeps of units from one cycle
// to the next: preemption counts, reborrow back-offs and claims, and the
// reservations the last cycle ended with (reservememo.go: heads, hints and
// the room kept while the face's state is unchanged; never persisted, as
// they change no decision), whether growing elastic units was tried with
// nothing changed since (GrowKept), and which waiting units it did not
// try (Retry), which a face that leaves waiting units out of a cycle must
// still hand it. A face
// tells it what it carried out and persists what Changes hands back. What
// each face keeps today, and where:
//
//	state                     simulator         server                    kube-scheduler
//	fair-share history        queue.Book        Ledger (rebuilt from the  Ledger
//	                                            store's jobs at start)
//	preemptions, back-offs    Memory (volatile) Memory, in the job's      Memory, in a ConfigMap
//	claims                    Memory (volatile) record (bbolt)            Memory, in a ConfigMap
//	kept reservations, hints  Memory            Memory (hints only)       Memory (hints only)
//	last waits and estimates  -                 a map in memory (explain) pod conditions
//	budgets' ended use        the replay        accounting records        the accounting log's
//	                                            (bbolt)                   ConfigMaps
//	allocation (gang.State)   one, all along    one, all along (built     one, kept between cycles;
//	                                            again when nodes change)  each cycle a trial it undoes
//	learned mix (packing)     gang.State        the store, at every       the ConfigMap, at every
//	                                            renewal and at stop       renewal
//	running units             kept, each made   built each cycle from     kept between cycles, each
//	                          as it starts      its running jobs          built again when its pods
//	                          (coreRun)                                   change (keptUnits)
//
// A node that goes under a running unit is met by one rule in every face
// (failure.go, MovesOff): a gang of two tasks or more on a node that
// failed without notice, and that did not ask to be requeued, moves its
// tasks there to a spare or free node next to the rest
// (gang.State.Replace, or ReplaceMember where each pod is a job of its
// own, which keep the gang's required topology); anything else stops
// whole and queues again at the front. The simulator moves a job placed as
// one placement; the server runs one machine, so a failure there has
// nowhere to move to.
//
// Resizing and moving running work is the cycle's too, once every
// pending unit was considered (elastic.go, defrag.go): elastic units below
// their full size (Running.Grow) grow when no unit waits; the first unit
// that waits for room takes back the fewest parts they grew by (newest
// first) when that lets it start now, or else, with Config.Defrag, has
// small checkpointing units moved out of its way when it gains more
// GPU-hours than they lose (Preempt.Move; a move counts as a stop toward
// Config.MaxPreemptions). The simulator applies both. The Kubernetes face
// moves pods that say how often they checkpoint and have a controller to
// start them again (its --defrag), but resizes nothing: pod counts are
// its workloads' controllers' to change. The server does neither: it runs
// one machine, where free GPUs are never scattered over nodes, and a
// running job's task count is fixed when its processes start.
//
// Budgets (budget.go, Config.Budgets) cap an account's GPU-hours per
// period (a tenant in the server, a queue in the Kubernetes face), at
// admission only: running work is never stopped for a budget. The rule:
// a unit starts when what its account used this period (ended work the
// face reports in Snapshot.Spent, running work since the period began),
// what its running work is committed to (GPUs up to each one's estimated
// end, within the period) and what the unit needs (its GPUs times its
// time limit, Job.Runtime, within the period) come to at most the budget.
// A unit without a time limit is held only once the budget is spent, so
// such work may overrun it by what it runs past that point, as may
// running work past its estimated end. The period is fixed by the
// budget and the snapshot's time, so it resets at its boundary with no
// clock read; Budget.RunsOut forecasts the date it runs out at the
// period's rate so far. A unit held waits with CodeBudget and the
// numbers (Wait.Budget).
//
// It imports internal/gang, internal/fleet, internal/job and internal/queue
// only. Start
// with Cycle in cycle.go; reservations and backfill are in reserve.go,
// victim selection in preempt.go.
package sched

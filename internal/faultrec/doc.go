// Package faultrec is the record of one handled fault, written alike by
// the simulator (sim.Result.Faults) and by corral kube-scheduler (a line
// of its accounting log), so that both report faults the same way. In the
// simulator Time is the replay's clock read from the Unix epoch, and the
// decision is at once (RecoverySeconds 0).
package faultrec

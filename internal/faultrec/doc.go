// Package faultrec is the record of one handled fault, written alike by
// the simulator (sim.Result.Faults) and by corral kube-scheduler (a line
// of its accounting log), so that both report faults the same way.
package faultrec

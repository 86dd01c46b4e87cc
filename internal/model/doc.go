// Package model holds the fleet and the work that corral schedules: nodes
// with their GPUs, and pods (tasks) with what they request.
//
// It validates what it is given and reads the Alibaba "openb" node and pod
// CSVs. It performs no scheduling and must not import any other corral
// package. Start with Node and Pod in types.go, then openb.go.
package model

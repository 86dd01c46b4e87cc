// Package fleet describes the machines corral schedules onto: nodes with
// their GPUs, where each node sits in the topology tree (zone > spine >
// block > rack, any depth), and the GPU islands inside a node (NVLink or
// NVSwitch domains, PCIe switches, NUMA nodes).
//
// A Fleet is plain data. It is read from a declarative YAML fleet file
// (file.go), built by the synthetic generator (generate.go) for large
// benchmarks, or assembled by hand in tests. Validate checks it before any
// scheduler uses it. The package imports only the GPU catalog
// (internal/gpu); start reading at Fleet and Node in fleet.go.
package fleet

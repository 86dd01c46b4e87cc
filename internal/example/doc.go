// Package example ships corral's built-in example: a small generated cluster
// and workload in the openb CSV format, so that `corral bench fgd` runs in
// seconds with no external data.
//
// Generate makes them from a fixed seed; the files under data/ are its output
// (a test keeps them in step; refresh with go test ./internal/example -update).
// It imports only model.
package example

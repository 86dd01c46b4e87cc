// Package cpuprofile writes a CPU profile of the process to a file, for
// the benchmark commands' -cpuprofile flags.
package cpuprofile

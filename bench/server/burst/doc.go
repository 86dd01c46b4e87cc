// Package burst submits many jobs at once from concurrent clients and
// measures the answers: the load generators for corral (loadgen) and for
// Slurm (slurmgen) drive their own targets through it, so both report
// submit latency the same way.
package burst

// Package slurmfmt reads the values Slurm users type into sbatch and
// friends, so that corral's CLI takes them as they are: time limits
// (-t 90, -t 1-12:00:00), memory sizes (--mem 16G, a bare number is MiB),
// generic resources (--gres gpu:a100:2), sbatch's --export rules, job
// arrays (--array 0-99%10), begin times (--begin now+1hour) and the
// patterns of output file names (-o slurm-%A_%a.out).
//
// It is pure: it imports only the standard library, Export takes the
// environment as an argument and ParseBegin the time it counts from. Errors say what is accepted but do not
// repeat the input, so that a caller can name its flag or field first
// (the flag package writes `invalid value "x" for flag -t: ...`).
package slurmfmt

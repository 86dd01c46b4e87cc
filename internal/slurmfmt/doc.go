// Package slurmfmt reads the values Slurm users type into sbatch and
// friends, so that corral's CLI takes them as they are: time limits
// (-t 90, -t 1-12:00:00), memory sizes (--mem 16G, a bare number is MiB),
// generic resources (--gres gpu:a100:2) and sbatch's --export rules.
//
// It is pure: it imports only the standard library, and Export takes the
// environment as an argument. Errors say what is accepted but do not
// repeat the input, so that a caller can name its flag or field first
// (the flag package writes `invalid value "x" for flag -t: ...`).
package slurmfmt

// Package sbatch reads the #SBATCH directives of a batch script as
// sbatch does (only those before the script's first command line) and
// turns them into corral submit's flags, one table of Slurm's options
// saying which map to which flag, which are ignored on one machine and
// why, and which are refused. Every directive that is not taken as it
// is says so, with the script's name and line.
//
// It is pure: it reads bytes and returns values, importing only the
// standard library. Start with Parse (script.go), then Interpret and the
// option table (options.go).
package sbatch

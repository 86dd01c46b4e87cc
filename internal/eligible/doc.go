// Package eligible decides which waiting jobs of the server may be given
// to the scheduling cycle at all, as Slurm does before it schedules: a
// job held by its user, one whose --begin time has not come, one whose
// dependencies (afterok, afterany, afternotok, after, singleton) are not
// met, and a task of a job array at its throttle (%N) wait outside the
// cycle, each with the reason squeue shows (JobHeldUser, BeginTime,
// Dependency, DependencyNeverSatisfied, JobArrayTaskLimit).
//
// It is pure: Evaluate reads a World (the time, the states of the jobs
// named in dependencies, the waiting and running jobs) and returns a
// Verdict per job; it imports only the standard library, and nothing of
// the store or the server. Start with Evaluate in eligible.go; the
// dependency grammar is in dependency.go.
package eligible

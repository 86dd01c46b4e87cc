// Package server is the corral daemon for one multi-GPU machine: it keeps
// jobs in the store (internal/store), decides with the scheduling core
// which waiting job starts on which GPUs (a one-node fleet and a
// gang.State), runs the tasks as real processes (internal/executor), and
// serves the HTTP API, Prometheus metrics and the dashboard.
//
// Every decision is written to the store before it is acted on: a start
// before the processes start, a stop before the signal, an end (with its
// accounting record, in the same transaction) before the GPUs are given
// back. On restart, recover re-adopts the tasks that survived, and marks
// the others lost.
//
// Each scheduling pass runs the shared cycle (internal/sched, cycle.go):
// every tenant is a queue of a ledger kept across passes (ledger.go),
// whose quota is the tenant's cap on GPUs held (in thousandths, so MIG
// slices and shares count their fraction); the cycle orders tenants by
// fair share, starts what fits, reserves room for what waits, and
// preempts lower priority when that makes room, and the server applies
// its decisions. The core's state covers
// the healthy GPUs only; its GPU indices map onto physical ones (phys), so
// that a GPU can be drained and the state rebuilt around running work.
//
// Jobs are fenced by Config.RunAs and Config.Cgroups (isolation.go): as
// root, each job runs as its tenant's Unix user, with a clean environment,
// in a cgroup per task that is killed whole, limits its memory and CPU
// and lets it open only its GPUs' device files (taskfiles.go); the
// database and the supervisors' records are root's alone. Isolation says
// what holds and what does not.
//
// The admin's limits hold for every job whatever it asks (limits.go,
// disk.go): a grace capped per server and per tenant, memory and CPU
// defaults per GPU for tasks that ask for none (charged to the tenant's
// quota when it has one), a pids limit, a tenant's highest priority
// (priority stops only the tenant's own work: sched's
// PriorityWithinQueue), a cap on each task's logs, and free room kept on
// the disks (a submission below it is refused with 507). Tenants and
// tokens have a lifecycle (tenant_life.go): deletion, rotation, listing
// and an audit log of admin actions.
//
// What a Slurm user does besides submitting (slurmenv.go, control_api.go,
// eligibility.go, refs.go): batch scripts run from the copy taken at
// submit, job arrays are one job per index made in one transaction,
// holds, begin times, dependencies and arrays' throttles are decided by
// internal/eligible before each cycle (a job they keep back is not given
// to the cycle), scontrol's hold, release, requeue and update change the
// store and the queue together, and each task gets the variables sbatch
// and srun set, its -o/-e files and its submitter's umask.
//
// Start with Server in server.go, the scheduling cycle in cycle.go, task
// lifecycles in run.go and finish.go, restart in recover.go, GPU health in
// health.go, isolation in isolation.go, then the API in http.go and the
// *_api.go files. The wire
// types are in the api subpackage, the Go client in client.
package server

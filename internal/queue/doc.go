// Package queue is the bookkeeping of the queue layer: queues with quotas
// per GPU flavor, cohorts that lend unused quota and take it back,
// hierarchical queues, fair sharing weighted by decayed usage, and the
// order in which pending jobs are considered. It decides whether a queue
// may use an amount of GPUs now; whether the job fits on the fleet is the
// caller's question to internal/gang.
//
// Quota is in milli-GPUs per Flavor (GPU model x capacity type), so MIG and
// shared tasks count their fraction (internal/sched.Charger charges them). A Book, built from Specs,
// is the ledger: Admit checks and records usage (within a queue's nominal
// quota, or borrowing its cohort peers' unused nominal quota within lending
// and borrowing limits), Release gives it back. Loans are a deterministic
// function of what every queue uses (lend.go): Lenders and Borrowers say
// who uses whose quota, and Reclaimable how much a queue may take back by
// preemption. A child queue's usage counts against its parent's quota too.
// Advance moves time and integrates usage with exponential decay; Share
// and Order rank queues for fair sharing (the formula is in share.go).
// Pending keeps each queue's waiting jobs in its Order and yields them in
// the global consideration order. Jain measures the outcome.
//
// Everything is pure: no clocks (time is a time.Duration given to
// Advance), no goroutines, no randomness, and no output in map order;
// equal inputs give equal results. It imports internal/job only and must
// not import any other corral package.
//
// Start with Spec in spec.go, then Book in book.go and admit.go, the
// lending rules in lend.go, fair share in share.go and Pending in
// pending.go.
package queue

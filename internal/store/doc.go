// Package store is the server's embedded database (bbolt): jobs with their
// state and GPU assignment, tenants and their hashed tokens, and
// accounting records of GPU use.
//
// Every change is one bbolt transaction; Update applies a scheduling
// decision (several jobs, accounting records) atomically, so that what the
// server acknowledged or decided survives a crash whole or not at all. Job
// IDs come from a counter kept in the same transaction and only grow.
//
// It imports no other corral package. Start with Store in store.go, the
// record types in types.go, then tenants.go and acct.go.
package store

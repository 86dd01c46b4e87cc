// Package plan sizes GPU commitments: how many GPUs of each model to reserve
// for 1 or 3 years so that a demand series costs the least.
//
// A committed GPU costs the committed rate R every hour of the term, busy
// or not; demand above the committed level c runs on demand at O (or, for a
// chosen share, on spot at S; their mix is the overflow rate P). The
// (c+1)-th committed GPU replaces P for every hour in which demand exceeds
// c, so it pays for itself when it is busy in more than R/P of the hours:
// the cost-minimising level is the number of GPUs busy more than that
// break-even share, the (1 - R/P) quantile of hourly demand. Optimise
// computes the whole cost curve exactly (cost.go) and takes its minimum;
// tests check it against the quantile rule and against brute force.
//
// A plan says the commitment's kind (the catalog's: a discount on usage or
// capacity nodes to fill) and bills the recommended level hour by hour
// with internal/cost/commit, which gives its coverage and utilisation;
// tests check the level against that package's brute-force search.
//
// demand.go reads the demand CSV (hour,gpu_model,gpus), plan.go prices a
// demand against the catalog (internal/cost/price) and adds sensitivity to
// demand growth, compare.go sets a packed plan beside an unpacked one.
// The package performs no I/O beyond the reader it is given.
package plan

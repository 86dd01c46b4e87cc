// Package api holds the types of corral's HTTP API, shared by the server
// and the CLI, the static validation of a job request, and the parser of
// YAML job files. The routes and their documents are in api/openapi.yaml
// at the root of the repository.
//
// It imports no other corral package but internal/slurmfmt (pure, for
// Slurm's time limits). Start with JobRequest in types.go.
package api

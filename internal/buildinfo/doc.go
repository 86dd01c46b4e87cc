// Package buildinfo says which corral this is: the module version or
// release tag, the VCS commit, whether the tree was modified, and the Go
// version and platform it was built with.
//
// Go stamps a binary built in a git checkout with its commit
// (runtime/debug.ReadBuildInfo's vcs.revision and vcs.modified); a release
// build may set the version and commit instead with
//
//	-ldflags "-X github.com/corral-sched/corral/internal/buildinfo.version=v0.1.0
//	          -X github.com/corral-sched/corral/internal/buildinfo.commit=<sha>"
//
// Start with Get; From is the same without reading the running binary, for
// tests. It imports only the standard library.
package buildinfo

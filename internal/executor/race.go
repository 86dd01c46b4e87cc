//go:build race

package executor

// raceBuild is true in binaries built with -race, which sleep a second
// before they exit; startSupervisor turns that off in supervisors so that
// tasks end on time in tests.
const raceBuild = true

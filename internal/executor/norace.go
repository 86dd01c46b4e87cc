//go:build !race

package executor

// raceBuild is true in binaries built with -race (see race.go).
const raceBuild = false

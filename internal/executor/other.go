//go:build !linux

package executor

import "errors"

// errUnsupported is what Start and Adopt return outside Linux.
var errUnsupported = errors.New("executor: running tasks needs Linux")

func startSupervisor(Spec, []byte) (supervisorProc, report, error) {
	return nil, report{}, errUnsupported
}

func findSupervisor(state) (supervisorProc, error) { return nil, errUnsupported }

func killGroup(int) {}

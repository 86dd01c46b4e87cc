//go:build !linux

package executor

import (
	"errors"
	"time"
)

// errUnsupported is what Start and Adopt return outside Linux.
var errUnsupported = errors.New("executor: running tasks needs Linux")

func startSupervisor(Spec, []byte) (supervisorProc, report, error) {
	return nil, report{}, errUnsupported
}

func findSupervisor(state) (supervisorProc, error) { return nil, errUnsupported }

func killGroup(int) {}

// OpenCgroups fails outside Linux: there are no cgroups.
func OpenCgroups(string) (*Cgroups, error) { return nil, errUnsupported }

// Remove has nothing to remove outside Linux.
func (c *Cgroups) Remove() error { return nil }

func makeTaskCgroup(s Spec) ([]string, error) {
	if s.Cgroups == nil {
		return nil, nil
	}
	return nil, errUnsupported
}

func removeCgroup([]string, time.Duration) error { return nil }

func memoryPeakKiB([]string) int64 { return 0 }

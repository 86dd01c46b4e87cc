package server

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"syscall"
)

// DefaultMaxOutput is the default of Config.MaxOutputBytes: 1 GiB per
// log of each task.
const DefaultMaxOutput = 1 << 30

// DefaultMinFree is the default of Config.MinFreeBytes.
const DefaultMinFree = 64 << 20

// roomToSubmit refuses a submission while the filesystem of the
// database or of the state directory has less free than the headroom:
// the room kept is what running jobs' logs, exit records and the
// records of their ends need.
func (s *Server) roomToSubmit() error {
	if s.cfg.MinFreeBytes <= 0 {
		return nil
	}
	for _, dir := range []string{filepath.Dir(s.st.Path()), s.cfg.StateDir} {
		free, err := freeBytes(dir)
		if err != nil {
			continue // a filesystem that cannot say is not refused for it
		}
		if free < s.cfg.MinFreeBytes {
			return fmt.Errorf("the server's disk is nearly full: %s has %s free, below the %s it keeps for the jobs that run; "+
				"new jobs are refused until an admin frees space (the --min-free headroom)", dir, byteString(free), byteString(s.cfg.MinFreeBytes))
		}
	}
	return nil
}

// freeBytes is what an unprivileged user may still write on dir's
// filesystem.
func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// diskCode is 507 for a write the disk refused, else 500.
func diskCode(err error) int {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}

// byteString writes a size with a binary unit.
func byteString(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", b>>10)
}

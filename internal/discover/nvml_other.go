//go:build !linux || !cgo

package discover

// Discover returns ErrNoDriver: this build of corral cannot load NVML,
// which needs cgo on Linux.
func Discover() ([]Device, error) {
	return nil, ErrNoDriver
}

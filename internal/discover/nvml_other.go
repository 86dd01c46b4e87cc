//go:build !linux || nonvml || !(amd64 || arm64 || cgo)

package discover

// Discover returns ErrNoDriver: this build of corral has no NVML (not
// Linux, built with -tags nonvml, or an architecture where purego needs
// cgo and cgo was off).
func Discover() ([]Device, error) {
	return nil, ErrNoDriver
}

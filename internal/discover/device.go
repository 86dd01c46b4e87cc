package discover

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoDriver is returned by Discover when there is no NVIDIA driver (or
// NVML library) on the machine, or corral was built without NVML (see
// nvml_other.go).
var ErrNoDriver = errors.New("discover: no NVIDIA driver")

// Device is one GPU of the machine.
type Device struct {
	Index     int    // NVML index, the order of nvidia-smi (PCI bus order)
	UUID      string // "GPU-5d8b...", or "fake-GPU-3" for a declared GPU
	Product   string // NVML's product name, "NVIDIA H100 80GB HBM3"; the model for a declared GPU
	Model     string // corral's catalog name, "H100-80GB"; "" when the catalog does not know the product
	MemoryMiB int64
	Fake      bool // declared, not discovered

	MIG          bool          // MIG mode is enabled (the current mode, not a pending one)
	MIGInstances []MIGInstance // the MIG instances that exist now, by UUID
	NVLinkPeers  []int         // indices of the GPUs this one reaches over NVLink, ascending
	Health       Health
}

// MIGInstance is one existing MIG device on a GPU.
type MIGInstance struct {
	UUID        string // "MIG-..."; what CUDA_VISIBLE_DEVICES takes
	Profile     string // "1g.10gb"
	GPUInstance int    // the GPU instance id on its GPU
	MemoryMiB   int64
}

// Health is what NVML tells about a GPU's condition. Readings a GPU does
// not support are left at zero.
type Health struct {
	TemperatureC       int    // core temperature
	SlowdownC          int    // temperature at which the GPU slows down
	ECCUncorrected     uint64 // uncorrected ECC errors since the driver loaded
	RemapPending       bool   // memory rows wait to be remapped: the GPU needs a reset
	RemapFailed        bool   // row remapping failed: the GPU should be replaced
	RetiredPagePending bool   // pages wait to be retired (GPUs before Ampere)
}

// Problems lists, in words, why the GPU should not take work; empty when
// it looks healthy.
func (h Health) Problems() []string {
	var p []string
	if h.ECCUncorrected > 0 {
		p = append(p, fmt.Sprintf("%d uncorrected ECC errors", h.ECCUncorrected))
	}
	if h.RemapFailed {
		p = append(p, "memory row remapping failed")
	}
	if h.RemapPending || h.RetiredPagePending {
		p = append(p, "memory repair pending until the GPU is reset")
	}
	if h.SlowdownC > 0 && h.TemperatureC >= h.SlowdownC {
		p = append(p, fmt.Sprintf("at %d°C, at or above its slowdown temperature of %d°C", h.TemperatureC, h.SlowdownC))
	}
	return p
}

// Healthy reports whether the GPU has no problem.
func (h Health) Healthy() bool { return len(h.Problems()) == 0 }

// String is a one-line description: "0 H100-80GB 81559MiB GPU-5d8b...".
func (d Device) String() string {
	model := d.Model
	if model == "" {
		model = fmt.Sprintf("%q", d.Product)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s %dMiB %s", d.Index, model, d.MemoryMiB, d.UUID)
	if d.MIG {
		fmt.Fprintf(&b, " MIG(%d instances)", len(d.MIGInstances))
	}
	return b.String()
}

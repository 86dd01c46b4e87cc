//go:build linux && cgo

package discover

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Discover returns the machine's GPUs in NVML index order, or ErrNoDriver
// when there is no NVIDIA driver.
func Discover() ([]Device, error) {
	lib := nvml.New()
	switch ret := lib.Init(); ret {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED:
		return nil, ErrNoDriver
	default:
		return nil, fmt.Errorf("discover: starting NVML: %v", ret)
	}
	defer lib.Shutdown()
	return discover(lib)
}

// discover reads every GPU from an initialised NVML.
func discover(lib nvml.Interface) ([]Device, error) {
	count, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("discover: counting GPUs: %v", ret)
	}
	handles := make([]nvml.Device, count)
	devices := make([]Device, count)
	for i := range count {
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("discover: GPU %d: %v", i, ret)
		}
		d, err := readDevice(h, i)
		if err != nil {
			return nil, err
		}
		handles[i], devices[i] = h, d
	}
	for i := range devices {
		devices[i].NVLinkPeers = nvlinkPeers(handles, i)
	}
	return devices, nil
}

// readDevice reads what one GPU is and how it is. Only the identity is
// required; readings the GPU does not support are left out.
func readDevice(h nvml.Device, index int) (Device, error) {
	d := Device{Index: index}
	var ret nvml.Return
	if d.UUID, ret = h.GetUUID(); ret != nvml.SUCCESS {
		return d, fmt.Errorf("discover: GPU %d: reading its UUID: %v", index, ret)
	}
	if d.Product, ret = h.GetName(); ret != nvml.SUCCESS {
		return d, fmt.Errorf("discover: GPU %d: reading its name: %v", index, ret)
	}
	mem, ret := h.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return d, fmt.Errorf("discover: GPU %d: reading its memory: %v", index, ret)
	}
	d.MemoryMiB = int64(mem.Total >> 20)
	d.Model = ModelName(d.Product, d.MemoryMiB)
	if current, _, ret := h.GetMigMode(); ret == nvml.SUCCESS && current == nvml.DEVICE_MIG_ENABLE {
		d.MIG = true
		instances, err := migInstances(h, d.Model)
		if err != nil {
			return d, fmt.Errorf("discover: GPU %d: %w", index, err)
		}
		d.MIGInstances = instances
	}
	d.Health = readHealth(h)
	return d, nil
}

// migInstances lists the MIG devices that exist on a GPU in MIG mode.
func migInstances(h nvml.Device, model string) ([]MIGInstance, error) {
	slots, ret := h.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("counting MIG devices: %v", ret)
	}
	var instances []MIGInstance
	for i := range slots {
		mig, ret := h.GetMigDeviceHandleByIndex(i)
		if ret == nvml.ERROR_NOT_FOUND || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue // no MIG device in this slot
		}
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("MIG device %d: %v", i, ret)
		}
		inst, err := readMIG(h, mig, model)
		if err != nil {
			return nil, fmt.Errorf("MIG device %d: %w", i, err)
		}
		instances = append(instances, inst)
	}
	return instances, nil
}

// readMIG reads one MIG device. Its profile is that of its GPU instance:
// the profile's compute slices and memory give the name.
func readMIG(parent, mig nvml.Device, model string) (MIGInstance, error) {
	var inst MIGInstance
	var ret nvml.Return
	if inst.UUID, ret = mig.GetUUID(); ret != nvml.SUCCESS {
		return inst, fmt.Errorf("reading its UUID: %v", ret)
	}
	if inst.GPUInstance, ret = mig.GetGpuInstanceId(); ret != nvml.SUCCESS {
		return inst, fmt.Errorf("reading its GPU instance: %v", ret)
	}
	if mem, ret := mig.GetMemoryInfo(); ret == nvml.SUCCESS {
		inst.MemoryMiB = int64(mem.Total >> 20)
	}
	gi, ret := parent.GetGpuInstanceById(inst.GPUInstance)
	if ret != nvml.SUCCESS {
		return inst, fmt.Errorf("GPU instance %d: %v", inst.GPUInstance, ret)
	}
	info, ret := gi.GetInfo()
	if ret != nvml.SUCCESS {
		return inst, fmt.Errorf("GPU instance %d: %v", inst.GPUInstance, ret)
	}
	profile, ret := parent.GetGpuInstanceProfileInfo(int(info.ProfileId))
	if ret != nvml.SUCCESS {
		return inst, fmt.Errorf("GPU instance %d: profile %d: %v", inst.GPUInstance, info.ProfileId, ret)
	}
	inst.Profile = migProfileName(model, int(profile.SliceCount), int64(profile.MemorySizeMB))
	if inst.MemoryMiB == 0 {
		inst.MemoryMiB = int64(profile.MemorySizeMB)
	}
	return inst, nil
}

// nvlinkPeers lists the GPUs that GPU i reaches over NVLink, directly or
// through NVSwitches, as NVML's peer-to-peer status reports them.
func nvlinkPeers(handles []nvml.Device, i int) []int {
	var peers []int
	for j, other := range handles {
		if j == i {
			continue
		}
		if status, ret := handles[i].GetP2PStatus(other, nvml.P2P_CAPS_INDEX_NVLINK); ret == nvml.SUCCESS && status == nvml.P2P_STATUS_OK {
			peers = append(peers, j)
		}
	}
	return peers
}

// readHealth takes the cheap health readings; any the GPU does not
// support stay zero.
func readHealth(h nvml.Device) Health {
	var health Health
	if t, ret := h.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		health.TemperatureC = int(t)
	}
	if t, ret := h.GetTemperatureThreshold(nvml.TEMPERATURE_THRESHOLD_SLOWDOWN); ret == nvml.SUCCESS {
		health.SlowdownC = int(t)
	}
	if n, ret := h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC); ret == nvml.SUCCESS {
		health.ECCUncorrected = n
	}
	if _, _, pending, failed, ret := h.GetRemappedRows(); ret == nvml.SUCCESS {
		health.RemapPending, health.RemapFailed = pending, failed
	}
	if state, ret := h.GetRetiredPagesPendingStatus(); ret == nvml.SUCCESS {
		health.RetiredPagePending = state == nvml.FEATURE_ENABLED
	}
	return health
}

package discover

import (
	"fmt"
)

// This file maps what NVML reports to Devices. It talks to NVML through
// nvmlLib and nvmlDevice, the few calls discovery needs: nvml_linux.go
// binds them to libnvidia-ml.so.1 at run time (no cgo), and the tests to
// simulated machines.

// nvmlReturn is an nvmlReturn_t, NVML's result code.
type nvmlReturn int32

// The nvmlReturn_t values of nvml.h that discovery tells apart or names.
const (
	nvmlSuccess                nvmlReturn = 0
	nvmlErrorUninitialized     nvmlReturn = 1
	nvmlErrorInvalidArgument   nvmlReturn = 2
	nvmlErrorNotSupported      nvmlReturn = 3
	nvmlErrorNoPermission      nvmlReturn = 4
	nvmlErrorAlreadyInit       nvmlReturn = 5
	nvmlErrorNotFound          nvmlReturn = 6
	nvmlErrorInsufficientSize  nvmlReturn = 7
	nvmlErrorInsufficientPower nvmlReturn = 8
	nvmlErrorDriverNotLoaded   nvmlReturn = 9
	nvmlErrorTimeout           nvmlReturn = 10
	nvmlErrorIRQIssue          nvmlReturn = 11
	nvmlErrorLibraryNotFound   nvmlReturn = 12
	nvmlErrorFunctionNotFound  nvmlReturn = 13
	nvmlErrorCorruptedInforom  nvmlReturn = 14
	nvmlErrorGPUIsLost         nvmlReturn = 15
	nvmlErrorResetRequired     nvmlReturn = 16
	nvmlErrorOperatingSystem   nvmlReturn = 17
	nvmlErrorLibRMVersion      nvmlReturn = 18
	nvmlErrorInUse             nvmlReturn = 19
	nvmlErrorMemory            nvmlReturn = 20
	nvmlErrorNoData            nvmlReturn = 21
	nvmlErrorUnknown           nvmlReturn = 999
)

var nvmlReturnNames = map[nvmlReturn]string{
	nvmlSuccess:                "SUCCESS",
	nvmlErrorUninitialized:     "ERROR_UNINITIALIZED",
	nvmlErrorInvalidArgument:   "ERROR_INVALID_ARGUMENT",
	nvmlErrorNotSupported:      "ERROR_NOT_SUPPORTED",
	nvmlErrorNoPermission:      "ERROR_NO_PERMISSION",
	nvmlErrorAlreadyInit:       "ERROR_ALREADY_INITIALIZED",
	nvmlErrorNotFound:          "ERROR_NOT_FOUND",
	nvmlErrorInsufficientSize:  "ERROR_INSUFFICIENT_SIZE",
	nvmlErrorInsufficientPower: "ERROR_INSUFFICIENT_POWER",
	nvmlErrorDriverNotLoaded:   "ERROR_DRIVER_NOT_LOADED",
	nvmlErrorTimeout:           "ERROR_TIMEOUT",
	nvmlErrorIRQIssue:          "ERROR_IRQ_ISSUE",
	nvmlErrorLibraryNotFound:   "ERROR_LIBRARY_NOT_FOUND",
	nvmlErrorFunctionNotFound:  "ERROR_FUNCTION_NOT_FOUND",
	nvmlErrorCorruptedInforom:  "ERROR_CORRUPTED_INFOROM",
	nvmlErrorGPUIsLost:         "ERROR_GPU_IS_LOST",
	nvmlErrorResetRequired:     "ERROR_RESET_REQUIRED",
	nvmlErrorOperatingSystem:   "ERROR_OPERATING_SYSTEM",
	nvmlErrorLibRMVersion:      "ERROR_LIB_RM_VERSION_MISMATCH",
	nvmlErrorInUse:             "ERROR_IN_USE",
	nvmlErrorMemory:            "ERROR_MEMORY",
	nvmlErrorNoData:            "ERROR_NO_DATA",
	nvmlErrorUnknown:           "ERROR_UNKNOWN",
}

// String is the code's name in nvml.h without its NVML_ prefix,
// "ERROR_GPU_IS_LOST", as go-nvml printed it.
func (r nvmlReturn) String() string {
	if name, ok := nvmlReturnNames[r]; ok {
		return name
	}
	return fmt.Sprintf("ERROR_%d", int32(r))
}

// nvmlLib is an initialised NVML.
type nvmlLib interface {
	DeviceGetCount() (int, nvmlReturn)
	DeviceGetHandleByIndex(index int) (nvmlDevice, nvmlReturn)
}

// nvmlDevice is a GPU, or a MIG device, as NVML knows it. Each method is
// one NVML call (GetGpuInstanceInfo two), named after it; the health
// readings take fixed arguments (see nvml_linux.go).
type nvmlDevice interface {
	GetUUID() (string, nvmlReturn)
	GetName() (string, nvmlReturn)
	GetMemoryTotal() (uint64, nvmlReturn) // bytes; nvmlMemory_t.total
	GetMigMode() (current bool, ret nvmlReturn)
	GetMaxMigDeviceCount() (int, nvmlReturn)
	GetMigDeviceHandleByIndex(index int) (nvmlDevice, nvmlReturn)
	GetGpuInstanceId() (int, nvmlReturn) // of a MIG device
	// GetGpuInstanceInfo is nvmlDeviceGetGpuInstanceById, then
	// nvmlGpuInstanceGetInfo: the profile ID of GPU instance id.
	GetGpuInstanceInfo(id int) (profileID int, ret nvmlReturn)
	// GetGpuInstanceProfileInfo takes one of NVML_GPU_INSTANCE_PROFILE_*
	// (0, 1, ...; not a profile ID) and returns that profile.
	GetGpuInstanceProfileInfo(profile int) (gpuInstanceProfile, nvmlReturn)
	GetNvLinkP2PStatus(other nvmlDevice) (ok bool, ret nvmlReturn) // P2P_CAPS_INDEX_NVLINK
	GetTemperature() (uint32, nvmlReturn)                          // TEMPERATURE_GPU
	GetSlowdownTemperature() (uint32, nvmlReturn)                  // TEMPERATURE_THRESHOLD_SLOWDOWN
	GetUncorrectedEccErrors() (uint64, nvmlReturn)                 // MEMORY_ERROR_TYPE_UNCORRECTED, VOLATILE_ECC
	GetRemappedRows() (pending, failed bool, ret nvmlReturn)
	GetRetiredPagesPendingStatus() (pending bool, ret nvmlReturn)
}

// gpuInstanceProfile is what discovery reads of an
// nvmlGpuInstanceProfileInfo_t.
type gpuInstanceProfile struct {
	ID           int // the profile ID, what nvmlGpuInstanceInfo_t.profileId names
	SliceCount   int
	MemorySizeMB uint64
}

// maxGPUInstanceProfiles bounds the walk over NVML_GPU_INSTANCE_PROFILE_*
// values, which nvml.h says to take from 0 until NVML answers
// ERROR_INVALID_ARGUMENT (there are 0x12 in NVML 13).
const maxGPUInstanceProfiles = 64

// discover reads every GPU from an initialised NVML.
func discover(lib nvmlLib) ([]Device, error) {
	count, ret := lib.DeviceGetCount()
	if ret != nvmlSuccess {
		return nil, fmt.Errorf("discover: counting GPUs: %v", ret)
	}
	handles := make([]nvmlDevice, count)
	devices := make([]Device, count)
	for i := range count {
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvmlSuccess {
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
func readDevice(h nvmlDevice, index int) (Device, error) {
	d := Device{Index: index}
	var ret nvmlReturn
	if d.UUID, ret = h.GetUUID(); ret != nvmlSuccess {
		return d, fmt.Errorf("discover: GPU %d: reading its UUID: %v", index, ret)
	}
	if d.Product, ret = h.GetName(); ret != nvmlSuccess {
		return d, fmt.Errorf("discover: GPU %d: reading its name: %v", index, ret)
	}
	total, ret := h.GetMemoryTotal()
	if ret != nvmlSuccess {
		return d, fmt.Errorf("discover: GPU %d: reading its memory: %v", index, ret)
	}
	d.MemoryMiB = int64(total >> 20)
	d.Model = ModelName(d.Product, d.MemoryMiB)
	if current, ret := h.GetMigMode(); ret == nvmlSuccess && current {
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
func migInstances(h nvmlDevice, model string) ([]MIGInstance, error) {
	slots, ret := h.GetMaxMigDeviceCount()
	if ret != nvmlSuccess {
		return nil, fmt.Errorf("counting MIG devices: %v", ret)
	}
	var instances []MIGInstance
	var profiles map[int]gpuInstanceProfile // by profile ID, read at the first MIG device
	for i := range slots {
		mig, ret := h.GetMigDeviceHandleByIndex(i)
		if ret == nvmlErrorNotFound || ret == nvmlErrorInvalidArgument {
			continue // no MIG device in this slot
		}
		if ret != nvmlSuccess {
			return nil, fmt.Errorf("MIG device %d: %v", i, ret)
		}
		if profiles == nil {
			profiles = gpuInstanceProfiles(h)
		}
		inst, err := readMIG(h, mig, model, profiles)
		if err != nil {
			return nil, fmt.Errorf("MIG device %d: %w", i, err)
		}
		instances = append(instances, inst)
	}
	return instances, nil
}

// gpuInstanceProfiles reads the GPU instance profiles a GPU supports, by
// profile ID. The ID a GPU instance reports is not the
// NVML_GPU_INSTANCE_PROFILE_* value that nvmlDeviceGetGpuInstanceProfileInfo
// takes (an A100's 1g.5gb is profile 0 with ID 19), so every value is
// read and matched on the ID.
func gpuInstanceProfiles(h nvmlDevice) map[int]gpuInstanceProfile {
	profiles := map[int]gpuInstanceProfile{}
	for p := range maxGPUInstanceProfiles {
		info, ret := h.GetGpuInstanceProfileInfo(p)
		if ret == nvmlErrorInvalidArgument {
			break // past the last profile
		}
		if ret == nvmlSuccess {
			profiles[info.ID] = info
		}
	}
	return profiles
}

// readMIG reads one MIG device. Its profile is that of its GPU instance:
// the profile's compute slices and memory give the name.
func readMIG(parent, mig nvmlDevice, model string, profiles map[int]gpuInstanceProfile) (MIGInstance, error) {
	var inst MIGInstance
	var ret nvmlReturn
	if inst.UUID, ret = mig.GetUUID(); ret != nvmlSuccess {
		return inst, fmt.Errorf("reading its UUID: %v", ret)
	}
	if inst.GPUInstance, ret = mig.GetGpuInstanceId(); ret != nvmlSuccess {
		return inst, fmt.Errorf("reading its GPU instance: %v", ret)
	}
	if total, ret := mig.GetMemoryTotal(); ret == nvmlSuccess {
		inst.MemoryMiB = int64(total >> 20)
	}
	profileID, ret := parent.GetGpuInstanceInfo(inst.GPUInstance)
	if ret != nvmlSuccess {
		return inst, fmt.Errorf("GPU instance %d: %v", inst.GPUInstance, ret)
	}
	profile, ok := profiles[profileID]
	if !ok {
		return inst, fmt.Errorf("GPU instance %d: profile %d: not among the GPU's profiles", inst.GPUInstance, profileID)
	}
	inst.Profile = migProfileName(model, profile.SliceCount, int64(profile.MemorySizeMB))
	if inst.MemoryMiB == 0 {
		inst.MemoryMiB = int64(profile.MemorySizeMB)
	}
	return inst, nil
}

// nvlinkPeers lists the GPUs that GPU i reaches over NVLink, directly or
// through NVSwitches, as NVML's peer-to-peer status reports them.
func nvlinkPeers(handles []nvmlDevice, i int) []int {
	var peers []int
	for j, other := range handles {
		if j == i {
			continue
		}
		if ok, ret := handles[i].GetNvLinkP2PStatus(other); ret == nvmlSuccess && ok {
			peers = append(peers, j)
		}
	}
	return peers
}

// readHealth takes the cheap health readings; any the GPU does not
// support stay zero.
func readHealth(h nvmlDevice) Health {
	var health Health
	if t, ret := h.GetTemperature(); ret == nvmlSuccess {
		health.TemperatureC = int(t)
	}
	if t, ret := h.GetSlowdownTemperature(); ret == nvmlSuccess {
		health.SlowdownC = int(t)
	}
	if n, ret := h.GetUncorrectedEccErrors(); ret == nvmlSuccess {
		health.ECCUncorrected = n
	}
	if pending, failed, ret := h.GetRemappedRows(); ret == nvmlSuccess {
		health.RemapPending, health.RemapFailed = pending, failed
	}
	if pending, ret := h.GetRetiredPagesPendingStatus(); ret == nvmlSuccess {
		health.RetiredPagePending = pending
	}
	return health
}

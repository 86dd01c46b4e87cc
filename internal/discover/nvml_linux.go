//go:build linux && !nonvml && (amd64 || arm64 || cgo)

package discover

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/ebitengine/purego"
)

// This file binds the NVML calls of nvml.go to the driver's
// libnvidia-ml.so.1, opened at run time with purego: no cgo, so corral
// builds with CGO_ENABLED=0 and without a C compiler or NVIDIA's headers.
// A binary built so is still linked dynamically against the C library
// (purego's dlopen); build with -tags nonvml for a static binary without
// NVML.

// nvmlLibraryName is the library the driver installs; go-nvml opened the
// same one, with the same flags.
const nvmlLibraryName = "libnvidia-ml.so.1"

// The nvml.h constants the fixed-argument calls of nvmlDevice pass.
const (
	nvmlP2PCapsIndexNVLink         = 2  // NVML_P2P_CAPS_INDEX_NVLINK
	nvmlP2PStatusOK                = 0  // NVML_P2P_STATUS_OK
	nvmlTemperatureGPU             = 0  // NVML_TEMPERATURE_GPU
	nvmlTemperatureThresholdSlow   = 1  // NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
	nvmlMemoryErrorTypeUncorrected = 1  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
	nvmlVolatileECC                = 0  // NVML_VOLATILE_ECC
	nvmlFeatureEnabled             = 1  // NVML_FEATURE_ENABLED
	nvmlDeviceMIGEnable            = 1  // NVML_DEVICE_MIG_ENABLE
	nvmlDeviceUUIDBufferSize       = 96 // NVML_DEVICE_UUID_V2_BUFFER_SIZE
	nvmlDeviceNameBufferSize       = 96 // NVML_DEVICE_NAME_V2_BUFFER_SIZE
)

// nvmlMemory is nvmlMemory_t.
type nvmlMemory struct {
	Total, Free, Used uint64
}

// nvmlGpuInstanceInfo is nvmlGpuInstanceInfo_t.
type nvmlGpuInstanceInfo struct {
	Device         uintptr
	ID             uint32
	ProfileID      uint32
	PlacementStart uint32
	PlacementSize  uint32
}

// nvmlGpuInstanceProfileInfo is nvmlGpuInstanceProfileInfo_t (version 1).
type nvmlGpuInstanceProfileInfo struct {
	ID                  uint32
	IsP2PSupported      uint32
	SliceCount          uint32
	InstanceCount       uint32
	MultiprocessorCount uint32
	CopyEngineCount     uint32
	DecoderCount        uint32
	EncoderCount        uint32
	JpegCount           uint32
	OfaCount            uint32
	MemorySizeMB        uint64
}

// nvmlAPI holds the library's functions; one the library lacks stays nil
// and its call answers ERROR_FUNCTION_NOT_FOUND.
type nvmlAPI struct {
	init                      func() int32
	shutdown                  func() int32
	deviceGetCount            func(count *uint32) int32
	deviceGetHandleByIndex    func(index uint32, device *uintptr) int32
	deviceGetUUID             func(device uintptr, uuid *byte, length uint32) int32
	deviceGetName             func(device uintptr, name *byte, length uint32) int32
	deviceGetMemoryInfo       func(device uintptr, memory *nvmlMemory) int32
	deviceGetMigMode          func(device uintptr, current, pending *uint32) int32
	deviceGetMaxMigDevices    func(device uintptr, count *uint32) int32
	deviceGetMigDeviceByIndex func(device uintptr, index uint32, mig *uintptr) int32
	deviceGetGpuInstanceID    func(device uintptr, id *uint32) int32
	deviceGetGpuInstanceByID  func(device uintptr, id uint32, instance *uintptr) int32
	gpuInstanceGetInfo        func(instance uintptr, info *nvmlGpuInstanceInfo) int32
	deviceGetGIProfileInfo    func(device uintptr, profile uint32, info *nvmlGpuInstanceProfileInfo) int32
	deviceGetP2PStatus        func(device1, device2 uintptr, index uint32, status *uint32) int32
	deviceGetTemperature      func(device uintptr, sensor uint32, temp *uint32) int32
	deviceGetTempThreshold    func(device uintptr, threshold uint32, temp *uint32) int32
	deviceGetTotalEccErrors   func(device uintptr, errorType, counterType uint32, count *uint64) int32
	deviceGetRemappedRows     func(device uintptr, corrRows, uncRows, isPending, failureOccurred *uint32) int32
	deviceGetRetiredPending   func(device uintptr, state *uint32) int32
}

// loadNVML opens the library and finds its functions, once.
var loadNVML = sync.OnceValues(func() (*nvmlAPI, error) {
	lib, err := purego.Dlopen(nvmlLibraryName, purego.RTLD_LAZY|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, err
	}
	api := &nvmlAPI{}
	bind := func(fptr any, names ...string) {
		for _, name := range names { // newest version first, as go-nvml picks them
			if sym, err := purego.Dlsym(lib, name); err == nil && sym != 0 {
				purego.RegisterFunc(fptr, sym)
				return
			}
		}
	}
	bind(&api.init, "nvmlInit_v2", "nvmlInit")
	bind(&api.shutdown, "nvmlShutdown")
	bind(&api.deviceGetCount, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount")
	bind(&api.deviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex")
	bind(&api.deviceGetUUID, "nvmlDeviceGetUUID")
	bind(&api.deviceGetName, "nvmlDeviceGetName")
	bind(&api.deviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo")
	bind(&api.deviceGetMigMode, "nvmlDeviceGetMigMode")
	bind(&api.deviceGetMaxMigDevices, "nvmlDeviceGetMaxMigDeviceCount")
	bind(&api.deviceGetMigDeviceByIndex, "nvmlDeviceGetMigDeviceHandleByIndex")
	bind(&api.deviceGetGpuInstanceID, "nvmlDeviceGetGpuInstanceId")
	bind(&api.deviceGetGpuInstanceByID, "nvmlDeviceGetGpuInstanceById")
	bind(&api.gpuInstanceGetInfo, "nvmlGpuInstanceGetInfo")
	bind(&api.deviceGetGIProfileInfo, "nvmlDeviceGetGpuInstanceProfileInfo")
	bind(&api.deviceGetP2PStatus, "nvmlDeviceGetP2PStatus")
	bind(&api.deviceGetTemperature, "nvmlDeviceGetTemperature")
	bind(&api.deviceGetTempThreshold, "nvmlDeviceGetTemperatureThreshold")
	bind(&api.deviceGetTotalEccErrors, "nvmlDeviceGetTotalEccErrors")
	bind(&api.deviceGetRemappedRows, "nvmlDeviceGetRemappedRows")
	bind(&api.deviceGetRetiredPending, "nvmlDeviceGetRetiredPagesPendingStatus")
	if api.init == nil || api.shutdown == nil {
		return nil, fmt.Errorf("%s has no nvmlInit", nvmlLibraryName)
	}
	return api, nil
})

// Discover returns the machine's GPUs in NVML index order, or ErrNoDriver
// when there is no NVIDIA driver.
func Discover() ([]Device, error) {
	api, err := loadNVML()
	if err != nil {
		return nil, ErrNoDriver // no libnvidia-ml.so.1: no driver
	}
	switch ret := nvmlReturn(api.init()); ret {
	case nvmlSuccess:
	case nvmlErrorLibraryNotFound, nvmlErrorDriverNotLoaded:
		return nil, ErrNoDriver
	default:
		return nil, fmt.Errorf("discover: starting NVML: %v", ret)
	}
	defer api.shutdown()
	return discover(api)
}

const notFound = nvmlErrorFunctionNotFound

func (api *nvmlAPI) DeviceGetCount() (int, nvmlReturn) {
	if api.deviceGetCount == nil {
		return 0, notFound
	}
	var n uint32
	ret := nvmlReturn(api.deviceGetCount(&n))
	return int(n), ret
}

func (api *nvmlAPI) DeviceGetHandleByIndex(index int) (nvmlDevice, nvmlReturn) {
	if api.deviceGetHandleByIndex == nil {
		return nil, notFound
	}
	var h uintptr
	ret := nvmlReturn(api.deviceGetHandleByIndex(uint32(index), &h))
	return nvmlHandle{api, h}, ret
}

// nvmlHandle is an nvmlDevice_t.
type nvmlHandle struct {
	api *nvmlAPI
	h   uintptr
}

// cString reads a NUL-terminated string from a buffer NVML filled.
func cString(buf []byte) string {
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf)
}

func (d nvmlHandle) GetUUID() (string, nvmlReturn) {
	if d.api.deviceGetUUID == nil {
		return "", notFound
	}
	buf := make([]byte, nvmlDeviceUUIDBufferSize)
	ret := nvmlReturn(d.api.deviceGetUUID(d.h, &buf[0], uint32(len(buf))))
	return cString(buf), ret
}

func (d nvmlHandle) GetName() (string, nvmlReturn) {
	if d.api.deviceGetName == nil {
		return "", notFound
	}
	buf := make([]byte, nvmlDeviceNameBufferSize)
	ret := nvmlReturn(d.api.deviceGetName(d.h, &buf[0], uint32(len(buf))))
	return cString(buf), ret
}

func (d nvmlHandle) GetMemoryTotal() (uint64, nvmlReturn) {
	if d.api.deviceGetMemoryInfo == nil {
		return 0, notFound
	}
	var m nvmlMemory
	ret := nvmlReturn(d.api.deviceGetMemoryInfo(d.h, &m))
	return m.Total, ret
}

func (d nvmlHandle) GetMigMode() (bool, nvmlReturn) {
	if d.api.deviceGetMigMode == nil {
		return false, notFound
	}
	var current, pending uint32
	ret := nvmlReturn(d.api.deviceGetMigMode(d.h, &current, &pending))
	return current == nvmlDeviceMIGEnable, ret
}

func (d nvmlHandle) GetMaxMigDeviceCount() (int, nvmlReturn) {
	if d.api.deviceGetMaxMigDevices == nil {
		return 0, notFound
	}
	var n uint32
	ret := nvmlReturn(d.api.deviceGetMaxMigDevices(d.h, &n))
	return int(n), ret
}

func (d nvmlHandle) GetMigDeviceHandleByIndex(index int) (nvmlDevice, nvmlReturn) {
	if d.api.deviceGetMigDeviceByIndex == nil {
		return nil, notFound
	}
	var h uintptr
	ret := nvmlReturn(d.api.deviceGetMigDeviceByIndex(d.h, uint32(index), &h))
	return nvmlHandle{d.api, h}, ret
}

func (d nvmlHandle) GetGpuInstanceId() (int, nvmlReturn) {
	if d.api.deviceGetGpuInstanceID == nil {
		return 0, notFound
	}
	var id uint32
	ret := nvmlReturn(d.api.deviceGetGpuInstanceID(d.h, &id))
	return int(id), ret
}

func (d nvmlHandle) GetGpuInstanceInfo(id int) (int, nvmlReturn) {
	if d.api.deviceGetGpuInstanceByID == nil || d.api.gpuInstanceGetInfo == nil {
		return 0, notFound
	}
	var gi uintptr
	if ret := nvmlReturn(d.api.deviceGetGpuInstanceByID(d.h, uint32(id), &gi)); ret != nvmlSuccess {
		return 0, ret
	}
	var info nvmlGpuInstanceInfo
	ret := nvmlReturn(d.api.gpuInstanceGetInfo(gi, &info))
	return int(info.ProfileID), ret
}

func (d nvmlHandle) GetGpuInstanceProfileInfo(profile int) (gpuInstanceProfile, nvmlReturn) {
	if d.api.deviceGetGIProfileInfo == nil {
		return gpuInstanceProfile{}, notFound
	}
	var info nvmlGpuInstanceProfileInfo
	ret := nvmlReturn(d.api.deviceGetGIProfileInfo(d.h, uint32(profile), &info))
	return gpuInstanceProfile{ID: int(info.ID), SliceCount: int(info.SliceCount), MemorySizeMB: info.MemorySizeMB}, ret
}

func (d nvmlHandle) GetNvLinkP2PStatus(other nvmlDevice) (bool, nvmlReturn) {
	o, ok := other.(nvmlHandle)
	if !ok {
		return false, nvmlErrorInvalidArgument
	}
	if d.api.deviceGetP2PStatus == nil {
		return false, notFound
	}
	var status uint32
	ret := nvmlReturn(d.api.deviceGetP2PStatus(d.h, o.h, nvmlP2PCapsIndexNVLink, &status))
	return status == nvmlP2PStatusOK, ret
}

func (d nvmlHandle) GetTemperature() (uint32, nvmlReturn) {
	if d.api.deviceGetTemperature == nil {
		return 0, notFound
	}
	var t uint32
	ret := nvmlReturn(d.api.deviceGetTemperature(d.h, nvmlTemperatureGPU, &t))
	return t, ret
}

func (d nvmlHandle) GetSlowdownTemperature() (uint32, nvmlReturn) {
	if d.api.deviceGetTempThreshold == nil {
		return 0, notFound
	}
	var t uint32
	ret := nvmlReturn(d.api.deviceGetTempThreshold(d.h, nvmlTemperatureThresholdSlow, &t))
	return t, ret
}

func (d nvmlHandle) GetUncorrectedEccErrors() (uint64, nvmlReturn) {
	if d.api.deviceGetTotalEccErrors == nil {
		return 0, notFound
	}
	var n uint64
	ret := nvmlReturn(d.api.deviceGetTotalEccErrors(d.h, nvmlMemoryErrorTypeUncorrected, nvmlVolatileECC, &n))
	return n, ret
}

func (d nvmlHandle) GetRemappedRows() (bool, bool, nvmlReturn) {
	if d.api.deviceGetRemappedRows == nil {
		return false, false, notFound
	}
	var corr, unc, pending, failed uint32
	ret := nvmlReturn(d.api.deviceGetRemappedRows(d.h, &corr, &unc, &pending, &failed))
	return pending != 0, failed != 0, ret
}

func (d nvmlHandle) GetRetiredPagesPendingStatus() (bool, nvmlReturn) {
	if d.api.deviceGetRetiredPending == nil {
		return false, notFound
	}
	var state uint32
	ret := nvmlReturn(d.api.deviceGetRetiredPending(d.h, &state))
	return state == nvmlFeatureEnabled, ret
}

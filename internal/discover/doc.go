// Package discover finds the GPUs of the machine corral's server runs on,
// or builds the fake GPUs an operator declares instead.
//
// Discover asks NVML for every GPU: its index, UUID, product name and
// corral's catalog model for it, memory, MIG mode and existing MIG
// instances, NVLink peers and health. It opens the driver's
// libnvidia-ml.so.1 at run time with github.com/ebitengine/purego, without
// cgo: corral builds with CGO_ENABLED=0 and without NVIDIA's headers, and
// its build prints nothing. Without an NVIDIA driver, off Linux, or in a
// build with -tags nonvml (a static binary, as deploy/Dockerfile makes),
// it returns ErrNoDriver.
//
// ParseDeclared reads a declaration such as "8xH100-80GB" or
// "4xA100-80GB,2xL4" into fake devices, so the server can schedule on a
// machine without GPUs.
//
// ModelName maps NVML product names ("NVIDIA H100 80GB HBM3") to catalog
// names ("H100-80GB"); the catalog is internal/gpu. Start reading at
// device.go, then nvml.go (NVML's answers to Devices), then nvml_linux.go
// (the calls bound to the library).
package discover

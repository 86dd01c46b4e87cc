//go:build linux && cgo

package discover

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxb200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// TestDiscoverOnThisMachine runs the real NVML path. Without a driver it
// must say so with ErrNoDriver; with one, it must describe real GPUs.
func TestDiscoverOnThisMachine(t *testing.T) {
	devices, err := Discover()
	if errors.Is(err, ErrNoDriver) {
		t.Log("no NVIDIA driver on this machine")
		if devices != nil {
			t.Errorf("got devices %v with ErrNoDriver", devices)
		}
		return
	}
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	for i, d := range devices {
		t.Logf("%v peers=%v health=%+v", d, d.NVLinkPeers, d.Health)
		if d.Index != i || d.UUID == "" || d.Product == "" || d.MemoryMiB <= 0 || d.Fake {
			t.Errorf("device %d is incomplete: %+v", i, d)
		}
	}
}

// The machines below are NVML's own simulated DGX servers from go-nvml.
// They simulate identity, memory and MIG; the tests add NVLink, health
// and MIG device handles, which the simulation leaves out.

func TestDiscoverDGX(t *testing.T) {
	tests := []struct {
		name    string
		machine *server.Server
		model   string
		product string
	}{
		{"DGX H100", dgxh100.New(), "H100-80GB", "NVIDIA H100 80GB HBM3"},
		{"DGX H200", dgxh200.New(), "H200-141GB", "NVIDIA H200 141GB HBM3e"},
		{"DGX B200", dgxb200.New(), "B200-180GB", "NVIDIA B200 180GB HBM3e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			equip(tt.machine, nvswitch(tt.machine))
			devices, err := discover(tt.machine)
			if err != nil {
				t.Fatal(err)
			}
			if len(devices) != 8 {
				t.Fatalf("found %d GPUs, want 8", len(devices))
			}
			uuids := map[string]bool{}
			for i, d := range devices {
				if d.Index != i || d.Model != tt.model || d.Product != tt.product || d.MIG || d.Fake {
					t.Errorf("GPU %d: %+v", i, d)
				}
				uuids[d.UUID] = true
				want := slices.DeleteFunc([]int{0, 1, 2, 3, 4, 5, 6, 7}, func(j int) bool { return j == i })
				if !slices.Equal(d.NVLinkPeers, want) {
					t.Errorf("GPU %d has NVLink peers %v, want %v", i, d.NVLinkPeers, want)
				}
				if !d.Health.Healthy() || d.Health.TemperatureC != 40 || d.Health.SlowdownC != 87 {
					t.Errorf("GPU %d health %+v", i, d.Health)
				}
			}
			if len(uuids) != 8 {
				t.Errorf("UUIDs are not distinct: %v", uuids)
			}
		})
	}
}

func TestDiscoverMIGInstances(t *testing.T) {
	machine := dgxh100.New()
	equip(machine, nil)
	gpu3 := machine.Devices[3].(*server.Device)
	gpu3.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	for _, profile := range []int{nvml.GPU_INSTANCE_PROFILE_3_SLICE, nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2} {
		info, ret := gpu3.GetGpuInstanceProfileInfo(profile)
		if ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
		if _, ret := gpu3.CreateGpuInstance(&info); ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
	}
	devices, err := discover(machine)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range devices {
		if d.MIG != (i == 3) {
			t.Errorf("GPU %d: MIG %v", i, d.MIG)
		}
	}
	var got []string
	for _, inst := range devices[3].MIGInstances {
		got = append(got, fmt.Sprintf("%s gi=%d %s %dMiB", inst.UUID, inst.GPUInstance, inst.Profile, inst.MemoryMiB))
	}
	want := []string{
		"MIG-3-0 gi=0 3g.40gb 40960MiB",
		"MIG-3-1 gi=1 1g.10gb 10240MiB",
		"MIG-3-2 gi=2 1g.20gb 20480MiB",
	}
	if !slices.Equal(got, want) {
		t.Errorf("MIG instances\n%v\nwant\n%v", got, want)
	}
	if len(devices[2].MIGInstances) != 0 {
		t.Errorf("GPU 2 has MIG instances outside MIG mode")
	}
}

func TestDiscoverHealth(t *testing.T) {
	machine := server.NewServerWithGPUs("550.54.15", "12.550.54.15", 12040,
		gpus.H100_SXM5_80GB, gpus.H100_SXM5_80GB, gpus.A100_PCIE_40GB, gpus.H100_SXM5_80GB)
	equip(machine, nil)
	dev := func(i int) *server.Device { return machine.Devices[i].(*server.Device) }
	dev(1).GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) { return 2, nvml.SUCCESS }
	dev(2).GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 91, nvml.SUCCESS }
	dev(3).GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 1, true, false, nvml.SUCCESS }
	devices, err := discover(machine)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		nil,
		{"2 uncorrected ECC errors"},
		{"at 91°C, at or above its slowdown temperature of 87°C"},
		{"memory repair pending until the GPU is reset"},
	}
	for i, d := range devices {
		if got := d.Health.Problems(); !slices.Equal(got, want[i]) {
			t.Errorf("GPU %d problems %q, want %q", i, got, want[i])
		}
	}
	if devices[2].Model != "A100-40GB" {
		t.Errorf("GPU 2 is %q, want A100-40GB", devices[2].Model)
	}
}

func TestDiscoverFailsOnBrokenGPU(t *testing.T) {
	machine := dgxh100.New()
	equip(machine, nil)
	machine.Devices[5].(*server.Device).GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
	_, err := discover(machine)
	if err == nil || !strings.Contains(err.Error(), "GPU 5") {
		t.Errorf("got %v, want an error naming GPU 5", err)
	}
}

// nvswitch is an NVLink fabric joining every GPU of the machine.
func nvswitch(machine *server.Server) map[[2]int]bool {
	links := map[[2]int]bool{}
	for i := range machine.Devices {
		for j := range machine.Devices {
			links[[2]int{i, j}] = i != j
		}
	}
	return links
}

// equip adds to a simulated machine what the simulation lacks: NVLink
// peer status from links, healthy readings (40°C of a slowdown at 87°C, no
// ECC errors), and MIG device handles for the GPU instances that exist,
// with UUIDs "MIG-<gpu>-<gpu instance>".
func equip(machine *server.Server, links map[[2]int]bool) {
	index := map[nvml.Device]int{}
	for i, h := range machine.Devices {
		index[h] = i
	}
	for i, h := range machine.Devices {
		d := h.(*server.Device)
		d.GetP2PStatusFunc = func(other nvml.Device, caps nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) {
			if caps == nvml.P2P_CAPS_INDEX_NVLINK && links[[2]int{i, index[other]}] {
				return nvml.P2P_STATUS_OK, nvml.SUCCESS
			}
			return nvml.P2P_STATUS_NOT_SUPPORTED, nvml.SUCCESS
		}
		d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 40, nvml.SUCCESS }
		d.GetTemperatureThresholdFunc = func(nvml.TemperatureThresholds) (uint32, nvml.Return) { return 87, nvml.SUCCESS }
		d.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) { return 0, nvml.SUCCESS }
		d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 0, false, false, nvml.SUCCESS }
		d.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
		d.GetGpuInstanceByIdFunc = func(id int) (nvml.GpuInstance, nvml.Return) {
			if gi := gpuInstance(d, id); gi != nil {
				return gi, nvml.SUCCESS
			}
			return nil, nvml.ERROR_NOT_FOUND
		}
		d.GetMigDeviceHandleByIndexFunc = func(slot int) (nvml.Device, nvml.Return) {
			gi := gpuInstance(d, slot) // one MIG device per GPU instance, in id order
			if gi == nil {
				return nil, nvml.ERROR_NOT_FOUND
			}
			profile := d.Config.MIGProfiles.GpuInstanceProfiles[int(gi.Info.ProfileId)]
			return &mock.Device{
				GetUUIDFunc:          func() (string, nvml.Return) { return fmt.Sprintf("MIG-%d-%d", i, gi.Info.Id), nvml.SUCCESS },
				GetGpuInstanceIdFunc: func() (int, nvml.Return) { return int(gi.Info.Id), nvml.SUCCESS },
				GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
					return nvml.Memory{Total: profile.MemorySizeMB << 20}, nvml.SUCCESS
				},
			}, nvml.SUCCESS
		}
	}
}

func gpuInstance(d *server.Device, id int) *server.GpuInstance {
	d.RLock()
	defer d.RUnlock()
	for gi := range d.GpuInstances {
		if int(gi.Info.Id) == id {
			return gi
		}
	}
	return nil
}

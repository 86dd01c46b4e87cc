package discover

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestDiscoverOnThisMachine runs the real NVML path. Without a driver it
// must say so with ErrNoDriver; with one, it must describe real GPUs.
// TestNVMLReal (nvml_real_test.go) checks the answers against nvidia-smi.
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

// The machines below are simulated: fakeLib and fakeGPU answer the NVML
// calls of nvmlLib and nvmlDevice as a driver would, with the products,
// memory and MIG profiles of NVIDIA's DGX servers (as go-nvml's simulated
// DGX machines had them, which these tests used before) and the profile
// IDs real GPUs report.

func TestDiscoverDGX(t *testing.T) {
	tests := []struct {
		name     string
		product  string
		memoryMB uint64
		model    string
	}{
		{"DGX H100", "NVIDIA H100 80GB HBM3", 81920, "H100-80GB"},
		{"DGX H200", "NVIDIA H200 141GB HBM3e", 144384, "H200-141GB"},
		{"DGX B200", "NVIDIA B200 180GB HBM3e", 184320, "B200-180GB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			machine := dgx(tt.product, tt.memoryMB, 8)
			machine.nvswitch()
			devices, err := discover(machine)
			if err != nil {
				t.Fatal(err)
			}
			if len(devices) != 8 {
				t.Fatalf("found %d GPUs, want 8", len(devices))
			}
			uuids := map[string]bool{}
			for i, d := range devices {
				if d.Index != i || d.Model != tt.model || d.Product != tt.product || d.MemoryMiB != int64(tt.memoryMB) || d.MIG || d.Fake {
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

func TestDiscoverNVLinkPairs(t *testing.T) {
	machine := dgx("NVIDIA H100 80GB HBM3", 81920, 4)
	machine.link(0, 1)
	machine.link(2, 3)
	devices, err := discover(machine)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{1}, {0}, {3}, {2}}
	for i, d := range devices {
		if !slices.Equal(d.NVLinkPeers, want[i]) {
			t.Errorf("GPU %d has NVLink peers %v, want %v", i, d.NVLinkPeers, want[i])
		}
	}
}

func TestDiscoverMIGInstances(t *testing.T) {
	machine := dgx("NVIDIA H100 80GB HBM3", 81920, 8)
	gpu3 := machine.gpus[3]
	gpu3.mig = true
	// GPU instances 0, 1, 2 of profiles 3g.40gb, 1g.10gb and 1g.20gb
	// (NVML_GPU_INSTANCE_PROFILE_3_SLICE, _1_SLICE, _1_SLICE_REV2; IDs 9,
	// 19, 15), MIG device slots 0, 2, 3 (slot 1 empty).
	for _, mig := range [][2]int{{0, 2}, {2, 0}, {3, 9}} {
		gpu3.createMIG(mig[0], mig[1])
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
	if s := devices[3].String(); !strings.HasSuffix(s, "MIG(3 instances)") {
		t.Errorf("GPU 3 reads %q", s)
	}
}

// A MIG device whose memory NVML does not report takes its profile's.
func TestDiscoverMIGMemoryFromProfile(t *testing.T) {
	machine := dgx("NVIDIA H100 80GB HBM3", 81920, 1)
	machine.gpus[0].mig = true
	mig := machine.gpus[0].createMIG(0, 4) // 7g.80gb
	mig.fail = map[string]nvmlReturn{"GetMemoryTotal": nvmlErrorNotSupported}
	devices, err := discover(machine)
	if err != nil {
		t.Fatal(err)
	}
	if got := devices[0].MIGInstances; len(got) != 1 || got[0].Profile != "7g.80gb" || got[0].MemoryMiB != 81920 {
		t.Errorf("MIG instances %+v", got)
	}
}

func TestDiscoverMIGErrors(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(gpu, mig *fakeGPU)
		want  string
	}{
		{"MIG device UUID", func(_, mig *fakeGPU) { mig.fail = map[string]nvmlReturn{"GetUUID": nvmlErrorUnknown} },
			"GPU 0: MIG device 0: reading its UUID: ERROR_UNKNOWN"},
		{"GPU instance", func(gpu, _ *fakeGPU) { gpu.fail = map[string]nvmlReturn{"GetGpuInstanceInfo": nvmlErrorNotFound} },
			"GPU 0: MIG device 0: GPU instance 0: ERROR_NOT_FOUND"},
		{"unknown profile", func(gpu, _ *fakeGPU) { gpu.instances[0] = 77 },
			"GPU 0: MIG device 0: GPU instance 0: profile 77: not among the GPU's profiles"},
		{"MIG slots", func(gpu, _ *fakeGPU) { gpu.fail = map[string]nvmlReturn{"GetMaxMigDeviceCount": nvmlErrorNoPermission} },
			"GPU 0: counting MIG devices: ERROR_NO_PERMISSION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			machine := dgx("NVIDIA H100 80GB HBM3", 81920, 1)
			gpu := machine.gpus[0]
			gpu.mig = true
			tt.spoil(gpu, gpu.createMIG(0, 0))
			_, err := discover(machine)
			if err == nil || err.Error() != "discover: "+tt.want {
				t.Errorf("got %v, want discover: %s", err, tt.want)
			}
		})
	}
}

func TestDiscoverHealth(t *testing.T) {
	machine := dgx("NVIDIA H100 80GB HBM3", 81920, 4)
	machine.gpus[2].name, machine.gpus[2].memoryMB = "NVIDIA A100-PCIE-40GB", 40960
	machine.gpus[1].ecc = 2
	machine.gpus[2].temperature = 91
	machine.gpus[3].remapPending = true
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

// Readings a GPU does not support stay zero; it is still discovered.
func TestDiscoverUnsupportedReadings(t *testing.T) {
	machine := dgx("Tesla T4", 15360, 2)
	machine.link(0, 1)
	for _, g := range machine.gpus {
		g.fail = map[string]nvmlReturn{}
		for _, call := range []string{"GetMigMode", "GetNvLinkP2PStatus", "GetTemperature", "GetSlowdownTemperature",
			"GetUncorrectedEccErrors", "GetRemappedRows", "GetRetiredPagesPendingStatus"} {
			g.fail[call] = nvmlErrorNotSupported
		}
	}
	devices, err := discover(machine)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range devices {
		if d.Model != "T4" || d.MIG || d.NVLinkPeers != nil || d.Health != (Health{}) {
			t.Errorf("GPU %d: %+v", i, d)
		}
	}
}

func TestDiscoverRetiredPages(t *testing.T) {
	machine := dgx("Tesla V100-SXM2-16GB", 16384, 1)
	machine.gpus[0].retiredPending = true
	devices, err := discover(machine)
	if err != nil {
		t.Fatal(err)
	}
	if !devices[0].Health.RetiredPagePending || devices[0].Health.Healthy() {
		t.Errorf("health %+v", devices[0].Health)
	}
}

func TestDiscoverFails(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(m *fakeLib)
		want  string
	}{
		{"count", func(m *fakeLib) { m.countRet = nvmlErrorUninitialized }, "counting GPUs: ERROR_UNINITIALIZED"},
		{"handle", func(m *fakeLib) { m.gpus[5].handleRet = nvmlErrorGPUIsLost }, "GPU 5: ERROR_GPU_IS_LOST"},
		{"UUID", func(m *fakeLib) { m.gpus[5].fail = map[string]nvmlReturn{"GetUUID": nvmlErrorGPUIsLost} },
			"GPU 5: reading its UUID: ERROR_GPU_IS_LOST"},
		{"name", func(m *fakeLib) { m.gpus[1].fail = map[string]nvmlReturn{"GetName": nvmlErrorInsufficientSize} },
			"GPU 1: reading its name: ERROR_INSUFFICIENT_SIZE"},
		{"memory", func(m *fakeLib) { m.gpus[0].fail = map[string]nvmlReturn{"GetMemoryTotal": nvmlReturn(42)} },
			"GPU 0: reading its memory: ERROR_42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			machine := dgx("NVIDIA H100 80GB HBM3", 81920, 8)
			tt.spoil(machine)
			_, err := discover(machine)
			if err == nil || err.Error() != "discover: "+tt.want {
				t.Errorf("got %v, want discover: %s", err, tt.want)
			}
		})
	}
}

// fakeLib is a simulated NVML with the GPUs gpus.
type fakeLib struct {
	gpus     []*fakeGPU
	countRet nvmlReturn
}

func (m *fakeLib) DeviceGetCount() (int, nvmlReturn) { return len(m.gpus), m.countRet }

func (m *fakeLib) DeviceGetHandleByIndex(i int) (nvmlDevice, nvmlReturn) {
	if i < 0 || i >= len(m.gpus) {
		return nil, nvmlErrorInvalidArgument
	}
	if g := m.gpus[i]; g.handleRet != nvmlSuccess {
		return nil, g.handleRet
	}
	return m.gpus[i], nvmlSuccess
}

// link joins GPUs i and j by NVLink.
func (m *fakeLib) link(i, j int) {
	m.gpus[i].links[m.gpus[j]] = true
	m.gpus[j].links[m.gpus[i]] = true
}

// nvswitch joins every GPU to every other.
func (m *fakeLib) nvswitch() {
	for i := range m.gpus {
		for j := range i {
			m.link(i, j)
		}
	}
}

// fakeGPU is one simulated GPU or MIG device. fail makes the named
// method answer that code.
type fakeGPU struct {
	index                  int
	uuid, name             string
	memoryMB               uint64
	handleRet              nvmlReturn
	fail                   map[string]nvmlReturn
	links                  map[*fakeGPU]bool
	temperature, slowdownC uint32
	ecc                    uint64
	remapPending           bool
	remapFailed            bool
	retiredPending         bool

	mig       bool
	migSlots  []*fakeGPU           // MIG devices by slot; nil is an empty slot
	instances map[int]int          // GPU instance ID -> profile ID
	profiles  []gpuInstanceProfile // by NVML_GPU_INSTANCE_PROFILE_* value; ID -1: not supported
	gpuInst   int                  // a MIG device's GPU instance
}

// dgx is a machine of n identical GPUs at 40°C with a slowdown at 87°C,
// MIG off, no NVLink.
func dgx(product string, memoryMB uint64, n int) *fakeLib {
	m := &fakeLib{}
	for i := range n {
		m.gpus = append(m.gpus, &fakeGPU{
			index: i, uuid: fmt.Sprintf("GPU-%08x-0000-0000-0000-%012d", 0x5d8b0000+i, i),
			name: product, memoryMB: memoryMB, links: map[*fakeGPU]bool{},
			temperature: 40, slowdownC: 87,
			instances: map[int]int{}, profiles: h100Profiles(memoryMB),
		})
	}
	return m
}

// h100Profiles are an H100 80GB's GPU instance profiles by
// NVML_GPU_INSTANCE_PROFILE_* value, with the IDs the driver reports
// (nvidia-smi mig -lgip), memory scaled for other sizes.
func h100Profiles(memoryMB uint64) []gpuInstanceProfile {
	p := func(id, slices int, mb uint64) gpuInstanceProfile {
		return gpuInstanceProfile{ID: id, SliceCount: slices, MemorySizeMB: mb * memoryMB / 81920}
	}
	none := gpuInstanceProfile{ID: -1}
	return []gpuInstanceProfile{
		p(19, 1, 10240), // 0 _1_SLICE: 1g.10gb
		p(14, 2, 20480), // 1 _2_SLICE: 2g.20gb
		p(9, 3, 40960),  // 2 _3_SLICE: 3g.40gb
		p(5, 4, 40960),  // 3 _4_SLICE: 4g.40gb
		p(0, 7, 81920),  // 4 _7_SLICE: 7g.80gb
		none, none,      // 5, 6: _8_SLICE, _6_SLICE
		p(20, 1, 10240),                                // 7 _1_SLICE_REV1: 1g.10gb+me
		none,                                           // 8 _2_SLICE_REV1
		p(15, 1, 20480),                                // 9 _1_SLICE_REV2: 1g.20gb
		none, none, none, none, none, none, none, none, // up to NVML_GPU_INSTANCE_PROFILE_COUNT
	}
}

// createMIG makes a GPU instance of the profile (an
// NVML_GPU_INSTANCE_PROFILE_* value) with the next GPU instance ID and
// its MIG device in slot, UUID "MIG-<gpu>-<gpu instance>".
func (g *fakeGPU) createMIG(slot, profile int) *fakeGPU {
	gi := len(g.instances)
	info := g.profiles[profile]
	g.instances[gi] = info.ID
	for len(g.migSlots) <= slot {
		g.migSlots = append(g.migSlots, nil)
	}
	mig := &fakeGPU{uuid: fmt.Sprintf("MIG-%d-%d", g.index, gi), memoryMB: info.MemorySizeMB, gpuInst: gi}
	g.migSlots[slot] = mig
	return mig
}

func (g *fakeGPU) failed(call string) (nvmlReturn, bool) {
	ret, ok := g.fail[call]
	return ret, ok
}

func (g *fakeGPU) GetUUID() (string, nvmlReturn) {
	if ret, ok := g.failed("GetUUID"); ok {
		return "", ret
	}
	return g.uuid, nvmlSuccess
}

func (g *fakeGPU) GetName() (string, nvmlReturn) {
	if ret, ok := g.failed("GetName"); ok {
		return "", ret
	}
	return g.name, nvmlSuccess
}

func (g *fakeGPU) GetMemoryTotal() (uint64, nvmlReturn) {
	if ret, ok := g.failed("GetMemoryTotal"); ok {
		return 0, ret
	}
	return g.memoryMB << 20, nvmlSuccess
}

func (g *fakeGPU) GetMigMode() (bool, nvmlReturn) {
	if ret, ok := g.failed("GetMigMode"); ok {
		return false, ret
	}
	return g.mig, nvmlSuccess
}

func (g *fakeGPU) GetMaxMigDeviceCount() (int, nvmlReturn) {
	if ret, ok := g.failed("GetMaxMigDeviceCount"); ok {
		return 0, ret
	}
	return 7, nvmlSuccess
}

func (g *fakeGPU) GetMigDeviceHandleByIndex(i int) (nvmlDevice, nvmlReturn) {
	if i < 0 || i >= 7 {
		return nil, nvmlErrorInvalidArgument
	}
	if !g.mig || i >= len(g.migSlots) || g.migSlots[i] == nil {
		return nil, nvmlErrorNotFound
	}
	return g.migSlots[i], nvmlSuccess
}

func (g *fakeGPU) GetGpuInstanceId() (int, nvmlReturn) { return g.gpuInst, nvmlSuccess }

func (g *fakeGPU) GetGpuInstanceInfo(id int) (int, nvmlReturn) {
	if ret, ok := g.failed("GetGpuInstanceInfo"); ok {
		return 0, ret
	}
	profile, ok := g.instances[id]
	if !ok {
		return 0, nvmlErrorNotFound
	}
	return profile, nvmlSuccess
}

// GetGpuInstanceProfileInfo answers as nvml.h says: NOT_SUPPORTED for a
// profile the GPU lacks, INVALID_ARGUMENT past the last one.
func (g *fakeGPU) GetGpuInstanceProfileInfo(profile int) (gpuInstanceProfile, nvmlReturn) {
	if profile < 0 || profile >= len(g.profiles) {
		return gpuInstanceProfile{}, nvmlErrorInvalidArgument
	}
	if g.profiles[profile].ID < 0 {
		return gpuInstanceProfile{}, nvmlErrorNotSupported
	}
	return g.profiles[profile], nvmlSuccess
}

func (g *fakeGPU) GetNvLinkP2PStatus(other nvmlDevice) (bool, nvmlReturn) {
	if ret, ok := g.failed("GetNvLinkP2PStatus"); ok {
		return false, ret
	}
	return g.links[other.(*fakeGPU)], nvmlSuccess
}

func (g *fakeGPU) GetTemperature() (uint32, nvmlReturn) {
	if ret, ok := g.failed("GetTemperature"); ok {
		return 0, ret
	}
	return g.temperature, nvmlSuccess
}

func (g *fakeGPU) GetSlowdownTemperature() (uint32, nvmlReturn) {
	if ret, ok := g.failed("GetSlowdownTemperature"); ok {
		return 0, ret
	}
	return g.slowdownC, nvmlSuccess
}

func (g *fakeGPU) GetUncorrectedEccErrors() (uint64, nvmlReturn) {
	if ret, ok := g.failed("GetUncorrectedEccErrors"); ok {
		return 0, ret
	}
	return g.ecc, nvmlSuccess
}

func (g *fakeGPU) GetRemappedRows() (bool, bool, nvmlReturn) {
	if ret, ok := g.failed("GetRemappedRows"); ok {
		return false, false, ret
	}
	return g.remapPending, g.remapFailed, nvmlSuccess
}

// GetRetiredPagesPendingStatus is supported only by GPUs before Ampere
// (here: those with retiredPending set).
func (g *fakeGPU) GetRetiredPagesPendingStatus() (bool, nvmlReturn) {
	if ret, ok := g.failed("GetRetiredPagesPendingStatus"); ok {
		return false, ret
	}
	if !g.retiredPending {
		return false, nvmlErrorNotSupported
	}
	return true, nvmlSuccess
}

func TestNVMLReturnString(t *testing.T) {
	for ret, want := range map[nvmlReturn]string{
		nvmlSuccess: "SUCCESS", nvmlErrorGPUIsLost: "ERROR_GPU_IS_LOST", nvmlErrorUnknown: "ERROR_UNKNOWN", 31: "ERROR_31",
	} {
		if got := ret.String(); got != want {
			t.Errorf("%d reads %q, want %q", int32(ret), got, want)
		}
	}
}

//go:build linux && !nonvml && (amd64 || arm64 || cgo)

package discover

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestNVMLStub runs Discover through the purego binding against a
// stand-in libnvidia-ml.so.1 built from testdata/nvmlstub.c: the calls,
// constants, struct layouts and string buffers of nvml_linux.go, checked
// without a GPU. It needs a C compiler (only here, for the stand-in) and
// runs Discover in a child process, where LD_LIBRARY_PATH finds the
// stand-in.
func TestNVMLStub(t *testing.T) {
	if os.Getenv("CORRAL_NVML_STUB_CHILD") == "1" {
		devices, err := Discover()
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		b, _ := json.Marshal(devices)
		fmt.Println("devices:", string(b))
		return
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		if cc, err = exec.LookPath("gcc"); err != nil {
			t.Skip("no C compiler to build the stand-in libnvidia-ml.so.1")
		}
	}
	dir := t.TempDir()
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", filepath.Join(dir, "libnvidia-ml.so.1"), "testdata/nvmlstub.c").CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in: %v\n%s", err, out)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNVMLStub$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CORRAL_NVML_STUB_CHILD=1", "LD_LIBRARY_PATH="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var line string
	for l := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(l, "devices: "); ok {
			line = rest
		}
	}
	var got []Device
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("child said:\n%s", out)
	}
	want := []Device{
		{Index: 0, UUID: "GPU-stub-0", Product: "NVIDIA H100 80GB HBM3", Model: "H100-80GB", MemoryMiB: 81559,
			NVLinkPeers: []int{1}, Health: Health{TemperatureC: 41, SlowdownC: 87, RemapPending: true}},
		{Index: 1, UUID: "GPU-stub-1", Product: "NVIDIA H100 80GB HBM3", Model: "H100-80GB", MemoryMiB: 81559,
			MIG: true, MIGInstances: []MIGInstance{
				{UUID: "MIG-stub-1-1", Profile: "3g.40gb", GPUInstance: 1, MemoryMiB: 40192},
				{UUID: "MIG-stub-1-5", Profile: "1g.10gb", GPUInstance: 5, MemoryMiB: 9856},
			},
			NVLinkPeers: []int{0}, Health: Health{TemperatureC: 42, SlowdownC: 87, ECCUncorrected: 3}},
	}
	if !reflect.DeepEqual(got, want) {
		w, _ := json.Marshal(want)
		t.Errorf("Discover through the stand-in:\n%s\nwant\n%s", line, w)
	}
}

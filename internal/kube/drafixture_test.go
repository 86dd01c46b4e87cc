package kube

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// The DeviceClasses and ResourceSlices of real DRA drivers, as their
// charts and kubelet plugins write them (testdata/dra, each file naming
// its source).

// draFixture reads the DeviceClasses and ResourceSlices of a file of
// testdata/dra, NODE in it replaced by node.
func draFixture(t *testing.T, file, node string) ([]*resourcev1.DeviceClass, []*resourcev1.ResourceSlice) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "dra", file))
	if err != nil {
		t.Fatal(err)
	}
	var classes []*resourcev1.DeviceClass
	var slices []*resourcev1.ResourceSlice
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(strings.ReplaceAll(string(b), "NODE", node)), 4096)
	for {
		var raw map[string]any
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		doc, err := json.Marshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		switch raw["kind"] {
		case "DeviceClass":
			c := &resourcev1.DeviceClass{}
			if err := json.Unmarshal(doc, c); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			classes = append(classes, c)
		case "ResourceSlice":
			s := &resourcev1.ResourceSlice{}
			if err := json.Unmarshal(doc, s); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			slices = append(slices, s)
		}
	}
	return classes, slices
}

// vendorClasses creates the DeviceClasses of a fixture, under their own
// names, and deletes them when the test ends. withExtended keeps the
// extended resource a class stands for (KEP-5004), which sends every pod
// asking it through DRA where no device plugin offers it.
func (e *env) vendorClasses(file string, withExtended bool) {
	e.t.Helper()
	classes, _ := draFixture(e.t, file, "")
	ctx := context.Background()
	for _, c := range classes {
		if !withExtended {
			c.Spec.ExtendedResourceName = nil
		}
		if _, err := e.c.Client.ResourceV1().DeviceClasses().Create(ctx, c, metav1.CreateOptions{}); err != nil {
			e.t.Fatalf("DeviceClass %s of %s: %v", c.Name, file, err)
		}
		name := c.Name
		e.t.Cleanup(func() { e.deleteClass(name) })
	}
}

// deleteClass deletes a DeviceClass and waits until it is gone, so that
// the next test may create it again.
func (e *env) deleteClass(name string) {
	ctx := context.Background()
	_ = e.c.Client.ResourceV1().DeviceClasses().Delete(ctx, name, metav1.DeleteOptions{})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := e.c.Client.ResourceV1().DeviceClasses().Get(ctx, name, metav1.GetOptions{}); err != nil {
			return
		}
	}
}

// vendorSlice publishes on node the first n devices (all for n <= 0) of
// a fixture's ResourceSlice.
func (e *env) vendorSlice(file, node string, n int) {
	e.t.Helper()
	_, slices := draFixture(e.t, file, node)
	ctx := context.Background()
	for _, s := range slices {
		if n > 0 && n < len(s.Spec.Devices) {
			s.Spec.Devices = s.Spec.Devices[:n]
		}
		if _, err := e.c.Client.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{}); err != nil {
			e.t.Fatalf("ResourceSlice of %s: %v", file, err)
		}
		name := s.Name
		e.t.Cleanup(func() { _ = e.c.Client.ResourceV1().ResourceSlices().Delete(ctx, name, metav1.DeleteOptions{}) })
	}
}

// The fixtures are what their drivers publish: they decode whole, the
// API server takes them, and their classes' selectors are NVIDIA's
// single-quoted CEL.
func TestDRAFixturesAreTheDriversShapes(t *testing.T) {
	classes, slices := draFixture(t, "nvidia-deviceclasses.yaml", "n")
	if len(classes) != 2 || !strings.Contains(classes[0].Spec.Selectors[0].CEL.Expression, "'gpu.nvidia.com'") {
		t.Fatalf("NVIDIA classes %+v", classes)
	}
	for file, want := range map[string]int{"nvidia-resourceslice-h100.yaml": 8, "nvidia-resourceslice-a100-mig.yaml": 14, "example-gpu.yaml": 8} {
		_, slices = draFixture(t, file, "n")
		if len(slices) != 1 || len(slices[0].Spec.Devices) != want || *slices[0].Spec.NodeName != "n" {
			t.Errorf("%s: %d slices, want one of %d devices on node n", file, len(slices), want)
		}
	}
}

// GPUs published as NVIDIA's kubelet plugin publishes them, asked for
// through the DeviceClass NVIDIA's chart installs (single-quoted CEL):
// GPUs to the core, so a Queue of 2 GPUs runs the first pod of 2 and
// keeps the second waiting over quota.
func TestDRANVIDIAChartClassIsGPUs(t *testing.T) {
	e := newEnv(t)
	node := "nvchart-0"
	e.nodeSpec(kubetest.Node{Name: node})
	e.vendorClasses("nvidia-deviceclasses.yaml", false)
	e.vendorSlice("nvidia-resourceslice-h100.yaml", node, 4)
	e.quotaOfClaims(node, "gpu.nvidia.com", "")
}

// The example driver's GPUs (a second vendor: no "type" attribute, its
// product in "model") are GPUs to the core as NVIDIA's are.
func TestDRASecondVendorIsGPUs(t *testing.T) {
	e := newEnv(t)
	node := "exgpu-0"
	e.nodeSpec(kubetest.Node{Name: node})
	e.vendorClasses("example-gpu.yaml", false)
	e.vendorSlice("example-gpu.yaml", node, 4)
	e.quotaOfClaims(node, "gpu.example.com", "")
}

// quotaOfClaims runs two pods claiming 2 devices of class each under a
// Queue of 2 GPUs: the first binds with its claim allocated on node, the
// second waits over quota.
func (e *env) quotaOfClaims(node, class, sel string) {
	e.t.Helper()
	q := e.createQueue("dra", 2)
	e.start(e.config())
	for _, n := range []string{"first", "second"} {
		e.claim(n, class, 2, sel)
		p := claimPod(n, n)
		p.Labels[LabelQueue] = q
		e.create(p)
		if n == "first" {
			e.waitBound("first")
			e.allocatedOn("first", node, "first", 2)
		}
	}
	e.waitUnschedulable("second", "over quota")
	if got := e.nodesOf(); got["second"] != "" {
		e.t.Fatalf("second bound to %s beyond its queue's 2 GPUs", got["second"])
	}
}

// MIG devices as NVIDIA's kubelet plugin publishes them (two A100s of
// seven 1g.10gb each), asked for through the chart's mig.nvidia.com class
// and a request selector in NVIDIA's single quotes: MIG instances to the
// core, seven of the eight pods run under a Queue of one GPU.
func TestDRANVIDIAChartMIGClassIsMIG(t *testing.T) {
	e := newEnv(t)
	node := "nvchartmig-0"
	e.nodeSpec(kubetest.Node{Name: node})
	e.vendorClasses("nvidia-deviceclasses.yaml", false)
	e.vendorSlice("nvidia-resourceslice-a100-mig.yaml", node, 0)
	e.migQuota("mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'")
}

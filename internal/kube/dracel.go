package kube

import (
	"context"
	"fmt"
	"slices"
	"sync"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	draCEL "k8s.io/dynamic-resource-allocation/cel"
)

// Which devices a DeviceClass or a request selects is decided as the
// allocator decides it: its CEL selectors evaluated against each device
// published, with the CEL library of k8s.io/dynamic-resource-allocation
// (the one the DynamicResources plugin allocates with), not by reading the
// expressions' text. A class's selectors are compiled once per generation
// of the class.

// DefaultDRAGPUDrivers are the DRA drivers whose devices are GPUs to the
// core unless Config.DRAGPUDrivers says otherwise: NVIDIA's
// (k8s-dra-driver-gpu), AMD's (k8s-gpu-dra-driver) and the Kubernetes
// example driver's (dra-example-driver, profile "gpu").
var DefaultDRAGPUDrivers = []string{DriverNVIDIA, "gpu.amd.com", "gpu.example.com"}

// celCompiler compiles the selectors; its features are those the API
// server of 1.37 enables by default (consumable capacity, list
// attributes).
var celCompiler = sync.OnceValue(func() *draCEL.Cache {
	return draCEL.NewCache(1000, draCEL.Features{EnableConsumableCapacity: true, EnableListTypeAttributes: true})
})

// compiledClass is a DeviceClass's selectors compiled, for one generation.
type compiledClass struct {
	uid        types.UID
	generation int64
	selectors  []draCEL.CompilationResult
	err        error // a selector that does not compile: the class selects nothing
}

// classCache holds the compiled classes by name; it is shared by the
// cycles, which run one at a time.
type classCache struct {
	mu     sync.Mutex
	byName map[string]*compiledClass
}

// compiled returns class's selectors compiled, compiling them when the
// class is new or changed.
func (c *classCache) compiled(class *resourcev1.DeviceClass) *compiledClass {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc := c.byName[class.Name]; cc != nil && cc.uid == class.UID && cc.generation == class.Generation {
		return cc
	}
	cc := &compiledClass{uid: class.UID, generation: class.Generation}
	cc.selectors, cc.err = compileSelectors(class.Spec.Selectors)
	if c.byName == nil {
		c.byName = map[string]*compiledClass{}
	}
	c.byName[class.Name] = cc
	return cc
}

// compileSelectors compiles CEL selectors.
func compileSelectors(sels []resourcev1.DeviceSelector) ([]draCEL.CompilationResult, error) {
	var out []draCEL.CompilationResult
	for _, s := range sels {
		if s.CEL == nil {
			continue
		}
		r := celCompiler().GetOrCompile(s.CEL.Expression)
		if r.Error != nil {
			return nil, fmt.Errorf("CEL selector %q: %w", s.CEL.Expression, r.Error)
		}
		out = append(out, r)
	}
	return out, nil
}

// selects reports whether every selector matches the device; a selector
// that fails to evaluate on it (an attribute it lacks) does not match.
func selects(sels []draCEL.CompilationResult, driver string, dev *resourcev1.Device) bool {
	in := draCEL.Device{Driver: driver, AllowMultipleAllocations: dev.AllowMultipleAllocations,
		Attributes: dev.Attributes, Capacity: dev.Capacity}
	for _, s := range sels {
		ok, _, err := s.DeviceMatches(context.Background(), in)
		if err != nil || !ok {
			return false
		}
	}
	return true
}

// publishedDevice is a device of a ResourceSlice, its driver, and what it
// is to the core.
type publishedDevice struct {
	driver string
	dev    *resourcev1.Device
	kind   deviceKind
}

// deviceKind is what a published device is to the core.
type deviceKind int

const (
	notGPU     deviceKind = iota
	wholeGPU              // a GPU
	migDevice             // a MIG instance that exists (not a partition cut on demand)
	partialGPU            // a partition of a GPU consuming its shared counters: not counted
)

// kindOf says what dev, published by driver, is: a device of a GPU driver
// is a MIG instance when its type is "mig" (NVIDIA's attribute), a
// partition when it consumes a GPU's shared counters, a GPU when it has no
// type or type "gpu" (NVIDIA's other types, vfio, are not).
func kindOf(gpuDrivers []string, driver string, dev *resourcev1.Device) deviceKind {
	if !slices.Contains(gpuDrivers, driver) {
		return notGPU
	}
	switch t := attrString(driver, dev, "type"); {
	case t == "mig":
		if len(dev.ConsumesCounters) > 0 || attrString(driver, dev, "profile") == "" || attrString(driver, dev, "parentUUID") == "" {
			return partialGPU
		}
		return migDevice
	case t != "" && t != "gpu":
		return notGPU
	case len(dev.ConsumesCounters) > 0 && t == "":
		return partialGPU
	}
	return wholeGPU
}

// attrString is a device's string attribute, named with or without its
// driver's domain; "" when it has none.
func attrString(driver string, dev *resourcev1.Device, name string) string {
	for _, k := range []resourcev1.QualifiedName{resourcev1.QualifiedName(name), resourcev1.QualifiedName(driver + "/" + name)} {
		if a, ok := dev.Attributes[k]; ok && a.StringValue != nil {
			return *a.StringValue
		}
	}
	return ""
}

// productOf is a GPU's product as GPU feature discovery labels it:
// NVIDIA's productName, or the model other drivers publish, spaces as
// dashes.
func productOf(driver string, dev *resourcev1.Device) string {
	p := attrString(driver, dev, "productName")
	if p == "" {
		p = attrString(driver, dev, "model")
	}
	return spacesToDashes(p)
}

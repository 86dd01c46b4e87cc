package gpu

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ErrInCatalog is returned by Register for a name the catalog already
// knows: use Lookup.
var ErrInCatalog = errors.New("gpu: model is in the catalog")

// registered holds the models added at run time by Register, by normalized
// name. The catalog itself never changes.
var registered struct {
	mu     sync.RWMutex
	models map[string]*Model
}

// Register adds a model the catalog lacks, described by the caller (for
// example from a Kubernetes node's GPU feature discovery labels), so that
// Lookup finds it from then on under any name that normalizes alike
// ("NVIDIA-GH200-480GB", "GH200 480GB"). A registered model is plain: it
// has no MIG profiles. memoryMiB may be 0 when unknown; such a model takes
// no memory-fraction requests.
//
// Registering a name again with the same memory returns the same model;
// with other memory it returns the existing model and an error. A name the
// catalog knows returns the catalog's model and ErrInCatalog. It is safe
// for concurrent use with Lookup.
func Register(name string, memoryMiB int64) (*Model, error) {
	key := normalize(name)
	switch {
	case key == "":
		return nil, errors.New("gpu: register: empty model name")
	case memoryMiB < 0:
		return nil, fmt.Errorf("gpu: register %q: negative memory %d MiB", name, memoryMiB)
	}
	if m, ok := byName[key]; ok {
		return m, ErrInCatalog // unwrapped: callers may try every node's model, every cycle
	}
	registered.mu.Lock()
	defer registered.mu.Unlock()
	if m, ok := registered.models[key]; ok {
		if m.MemoryMiB != memoryMiB {
			return m, fmt.Errorf("gpu: register %q with %d MiB: registered before as %s with %d MiB", name, memoryMiB, m.Name, m.MemoryMiB)
		}
		return m, nil
	}
	if registered.models == nil {
		registered.models = map[string]*Model{}
	}
	m := &Model{Name: strings.TrimSpace(name), MemoryMiB: memoryMiB}
	registered.models[key] = m
	return m, nil
}

// lookupRegistered finds a model added by Register, by normalized name.
func lookupRegistered(key string) (*Model, bool) {
	registered.mu.RLock()
	defer registered.mu.RUnlock()
	m, ok := registered.models[key]
	return m, ok
}

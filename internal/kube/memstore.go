package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/corral-sched/corral/internal/sched"
)

// The core's memory of units (sched.Memory: preemption counts, reborrow
// back-offs, claims) in the API server, so that a new leader, or a
// replica restarted, goes on from it instead of from nothing: one
// ConfigMap NAMESPACE/NAME, a key per unit remembered. A unit's name
// ("group ns/name", "pod ns/name") becomes a key with its space and
// slash as "." and "_" (neither may appear in a namespace or object
// name, so no two units share a key); the value is the JSON of what is
// remembered, with the unit's name.

// memoryStore reads and writes the ConfigMap of the units' memory.
type memoryStore struct {
	client   kubernetes.Interface
	ns, name string
}

// storedUnit is one key's value.
type storedUnit struct {
	Unit string `json:"unit"`
	sched.Remembered
}

// newMemoryStore returns the store at "namespace/name", or nil for "".
func newMemoryStore(client kubernetes.Interface, at string) (*memoryStore, error) {
	if at == "" {
		return nil, nil
	}
	ns, name, ok := strings.Cut(at, "/")
	if !ok || ns == "" || name == "" {
		return nil, fmt.Errorf("unit memory ConfigMap %q: want namespace/name", at)
	}
	var errs []string
	errs = append(errs, prefixed("namespace", validation.IsDNS1123Label(ns))...)
	errs = append(errs, prefixed("name", validation.IsDNS1123Subdomain(name))...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("unit memory ConfigMap %q: %s", at, strings.Join(errs, "; "))
	}
	return &memoryStore{client: client, ns: ns, name: name}, nil
}

// memoryKeys turns a unit's name into its ConfigMap key.
var memoryKeys = strings.NewReplacer(" ", ".", "/", "_")

// memoryKey is the ConfigMap key of a unit.
func memoryKey(unit string) string { return memoryKeys.Replace(unit) }

// load reads what is remembered; a ConfigMap not there is an empty
// memory.
func (m *memoryStore) load(ctx context.Context) (map[string]sched.Remembered, error) {
	cm, err := m.client.CoreV1().ConfigMaps(m.ns).Get(ctx, m.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, m.wrap(err)
	}
	out := make(map[string]sched.Remembered, len(cm.Data))
	for key, v := range cm.Data {
		var u storedUnit
		if err := json.Unmarshal([]byte(v), &u); err != nil || memoryKey(u.Unit) != key {
			return nil, m.wrap(fmt.Errorf("key %s: not a unit's memory: %q", key, v))
		}
		out[u.Unit] = u.Remembered
	}
	return out, nil
}

// save writes the changes in one merge patch (null deletes a key),
// creating the ConfigMap when it is not there.
func (m *memoryStore) save(ctx context.Context, changes []sched.Change) error {
	if len(changes) == 0 {
		return nil
	}
	data := map[string]any{}
	created := map[string]string{}
	for _, c := range changes {
		key := memoryKey(c.Unit)
		if c.Gone {
			data[key] = nil
			continue
		}
		v, err := json.Marshal(storedUnit{Unit: c.Unit, Remembered: c.Remembered})
		if err != nil {
			return m.wrap(err)
		}
		data[key], created[key] = string(v), string(v)
	}
	patch, err := json.Marshal(map[string]any{"data": data})
	if err != nil {
		return m.wrap(err)
	}
	cms := m.client.CoreV1().ConfigMaps(m.ns)
	_, err = cms.Patch(ctx, m.name, types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsNotFound(err) {
		return m.wrap(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: m.name, Namespace: m.ns}, Data: created}
	_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	return m.wrap(err)
}

func (m *memoryStore) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("unit memory ConfigMap %s/%s: %w", m.ns, m.name, err)
}

// restoreUnits reads the units' memory back as this replica starts
// leading. What cannot be read is logged, and the replica goes on with
// what it knows.
func (s *Scheduler) restoreUnits(ctx context.Context) {
	if s.unitsStore == nil {
		return
	}
	saved, err := s.unitsStore.load(ctx)
	if err != nil {
		s.log.Warn("unit memory not read back; preemption counts and back-offs start afresh", "err", err)
		return
	}
	s.mu.Lock()
	s.units.Restore(saved)
	s.mu.Unlock()
	s.log.Info("unit memory read back", "units", len(saved))
}

// persistUnits writes what a cycle changed in the units' memory; what
// fails is written with the next cycle's changes.
func (s *Scheduler) persistUnits(ctx context.Context) {
	if s.unitsStore == nil {
		return
	}
	s.mu.Lock()
	changes := s.units.Changes()
	s.mu.Unlock()
	if err := s.unitsStore.save(ctx, changes); err != nil {
		s.log.Warn("unit memory", "err", err)
		s.mu.Lock()
		s.units.Unsaved(changes)
		s.mu.Unlock()
	}
}

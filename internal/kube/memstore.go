package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
		if strings.HasPrefix(key, bindingKeyPrefix) || key == learnedMixKey || key == defragMovesKey {
			continue // an inferred gang's placement being bound (below), the learned mix (learned.go), or the moves (defragmoves.go)
		}
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
		data[key] = string(v)
	}
	return m.patch(ctx, data)
}

// patch merges data into the ConfigMap's (a nil value deletes its key),
// creating the ConfigMap when it is not there.
func (m *memoryStore) patch(ctx context.Context, data map[string]any) error {
	patch, err := json.Marshal(map[string]any{"data": data})
	if err != nil {
		return m.wrap(err)
	}
	cms := m.client.CoreV1().ConfigMaps(m.ns)
	_, err = cms.Patch(ctx, m.name, types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsNotFound(err) {
		return m.wrap(err)
	}
	created := map[string]string{}
	for k, v := range data {
		if s, ok := v.(string); ok {
			created[k] = s
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: m.name, Namespace: m.ns}, Data: created}
	_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) { // made meanwhile by a write beside this one
		_, err = cms.Patch(ctx, m.name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	return m.wrap(err)
}

// A gang inferred from its owner (an indexed Job, a JobSet, a group of a
// LeaderWorkerSet) has no object to record the placement being bound on
// (intent.go), so its record is kept in this ConfigMap too: the key is
// bindingKeyPrefix and the group's key (its slash and colons as "_",
// which no namespace or object name holds), the value the record with
// the group's kind and minimum.
const bindingKeyPrefix = "binding."

// storedBinding is one inferred gang's record.
type storedBinding struct {
	Namespace string `json:"namespace"`
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	MinMember int    `json:"minMember"`
	intent
}

func (b *storedBinding) podGroup() *podGroup {
	return &podGroup{Namespace: b.Namespace, Name: b.Group, Kind: b.Kind, MinMember: b.MinMember}
}

var bindingKeys = strings.NewReplacer("/", "_", ":", "_")

func bindingKey(g *podGroup) string { return bindingKeyPrefix + bindingKeys.Replace(g.key()) }

// writeBinding records the placement of g being bound.
func (m *memoryStore) writeBinding(ctx context.Context, g *podGroup, in intent) error {
	v, err := json.Marshal(storedBinding{Namespace: g.Namespace, Group: g.Name, Kind: g.Kind, MinMember: g.MinMember, intent: in})
	if err != nil {
		return m.wrap(err)
	}
	return m.patch(ctx, map[string]any{bindingKey(g): string(v)})
}

// clearBinding removes g's record.
func (m *memoryStore) clearBinding(ctx context.Context, g *podGroup) error {
	return m.patch(ctx, map[string]any{bindingKey(g): nil})
}

// bindings reads the records of the inferred gangs being bound, by key.
func (m *memoryStore) bindings(ctx context.Context) (map[string]*storedBinding, error) {
	cm, err := m.client.CoreV1().ConfigMaps(m.ns).Get(ctx, m.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, m.wrap(err)
	}
	out := map[string]*storedBinding{}
	var bad []string
	for key, v := range cm.Data {
		if !strings.HasPrefix(key, bindingKeyPrefix) {
			continue
		}
		b := &storedBinding{}
		if err := json.Unmarshal([]byte(v), b); err != nil || bindingKey(b.podGroup()) != key {
			bad = append(bad, key)
			continue
		}
		out[key] = b
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return out, m.wrap(fmt.Errorf("keys %s: not gangs' placement records; left as they are", strings.Join(bad, ", ")))
	}
	return out, nil
}

// readKey decodes the JSON under key into v; false when the ConfigMap or
// the key is not there.
func (m *memoryStore) readKey(ctx context.Context, key string, v any) (bool, error) {
	cm, err := m.client.CoreV1().ConfigMaps(m.ns).Get(ctx, m.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, m.wrap(err)
	}
	s, ok := cm.Data[key]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return false, m.wrap(fmt.Errorf("key %s: %w", key, err))
	}
	return true, nil
}

// writeKey writes v as JSON under key.
func (m *memoryStore) writeKey(ctx context.Context, key string, v any) error {
	s, err := json.Marshal(v)
	if err != nil {
		return m.wrap(err)
	}
	return m.patch(ctx, map[string]any{key: string(s)})
}

func (m *memoryStore) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("unit memory ConfigMap %s/%s: %w", m.ns, m.name, err)
}

// restoreUnits reads the units' memory, the learned mix (learned.go) and
// the last hour's defragmentation moves (defragmoves.go) back as this
// replica starts leading. What cannot be read
// is logged, and the replica goes on with what it knows.
func (s *Scheduler) restoreUnits(ctx context.Context) {
	if s.unitsStore == nil {
		return
	}
	s.restoreLearned(ctx)
	s.restoreMoves(ctx)
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

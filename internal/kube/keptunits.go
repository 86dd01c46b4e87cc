package kube

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/corral-sched/corral/internal/sched"
)

// keptUnits are the running units as the kept cluster holds them from
// one cycle to the next: a unit is built again only when one of its pods
// is adopted, released or replaced, so that a cycle does not group every
// bound pod into units again (runningUnits does, for a snapshot built
// afresh). The units are kept in two parallel lists, the core's running
// units and the pods each stands for; a unit gone takes the last one's
// place. The core orders running units itself, by keys that end with the
// name, so their order here decides nothing.
type keptUnits struct {
	by      map[string]*keptUnit
	stale   map[string]bool // units to build again
	sets    []victimSet
	running []sched.Running
	// key is what the units were built for: the Queues' names (a unit in
	// no Queue is charged to none).
	key string
	// patched are the units whose Preemptions the last cycle set from
	// the replica's memory of stops.
	patched []string
}

// keptUnit is one running unit: its pods, and where it is in the lists
// (-1: not yet there).
type keptUnit struct {
	at   int
	pods []*keptPod
}

func newKeptUnits() *keptUnits {
	return &keptUnits{by: map[string]*keptUnit{}, stale: map[string]bool{}}
}

// add counts kp, adopted, in its unit.
func (u *keptUnits) add(kp *keptPod) {
	name := kp.b.unit
	ku := u.by[name]
	if ku == nil {
		ku = &keptUnit{at: -1}
		u.by[name] = ku
	}
	ku.pods = append(ku.pods, kp)
	u.stale[name] = true
}

// remove takes kp, released, out of its unit.
func (u *keptUnits) remove(kp *keptPod) {
	name := kp.b.unit
	if ku := u.by[name]; ku != nil {
		ku.pods = slices.DeleteFunc(ku.pods, func(o *keptPod) bool { return o == kp })
		u.stale[name] = true
	}
}

// replaced builds kp's unit again: its object changed.
func (u *keptUnits) replaced(kp *keptPod) { u.stale[kp.b.unit] = true }

// all builds every unit again.
func (u *keptUnits) all() {
	for name := range u.by {
		u.stale[name] = true
	}
}

// list is the running units for the cycle of snap, the stale ones built
// again: the pods each stands for, and the core's running units, their
// preemptions as the replica remembers them (snapshot.stops). The lists
// are the kept ones: the cycle reads them and changes nothing.
func (u *keptUnits) list(snap *snapshot) ([]victimSet, []sched.Running) {
	if key := queuesKey(snap.queues); key != u.key {
		u.key = key
		u.all()
	}
	for _, name := range slices.Sorted(maps.Keys(u.stale)) {
		u.build(name, snap)
	}
	clear(u.stale)
	for _, name := range u.patched {
		if ku := u.by[name]; ku != nil {
			u.running[ku.at].Preemptions = 0
		}
	}
	u.patched = u.patched[:0]
	for name, r := range snap.stops {
		if ku := u.by[name]; ku != nil && r.Preemptions != 0 {
			u.running[ku.at].Preemptions = r.Preemptions
			u.patched = append(u.patched, name)
		}
	}
	return u.sets, u.running
}

// build makes the named unit's entries again, or drops them when it has
// no pods left.
func (u *keptUnits) build(name string, snap *snapshot) {
	ku := u.by[name]
	if ku == nil {
		return
	}
	if len(ku.pods) == 0 {
		u.drop(name, ku)
		return
	}
	sort.Slice(ku.pods, func(a, b int) bool { return ku.pods[a].order < ku.pods[b].order })
	first := ku.pods[0].b
	v := victimSet{name: name, pods: make([]boundPod, len(ku.pods)), priority: first.priority, created: first.created}
	for i, kp := range ku.pods {
		b := kp.b
		v.pods[i] = b
		v.priority = max(v.priority, b.priority)
		if b.created.Before(&v.created) {
			v.created = b.created
		}
		if started := b.boundTime(snap.boundAt); started.After(v.started) {
			v.started = started
		}
	}
	r := runningOf(v, snap, 0)
	if ku.at < 0 {
		ku.at = len(u.sets)
		u.sets, u.running = append(u.sets, v), append(u.running, r)
		return
	}
	u.sets[ku.at], u.running[ku.at] = v, r
}

// drop takes the named unit out of the lists, the last one taking its
// place.
func (u *keptUnits) drop(name string, ku *keptUnit) {
	delete(u.by, name)
	if ku.at < 0 {
		return
	}
	last := len(u.sets) - 1
	if ku.at != last {
		u.sets[ku.at], u.running[ku.at] = u.sets[last], u.running[last]
		u.by[u.sets[ku.at].name].at = ku.at
	}
	u.sets[last], u.running[last] = victimSet{}, sched.Running{}
	u.sets, u.running = u.sets[:last], u.running[:last]
}

// queuesKey is the Queues' names as one string.
func queuesKey(queues map[string]*queueSpec) string {
	return strings.Join(slices.Sorted(maps.Keys(queues)), "\x00")
}

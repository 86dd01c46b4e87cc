package kube

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// unit is what one decision places: a single pod, or the pending pods of
// one pod group.
type unit struct {
	name     string        // namespace/pod or namespace/group
	job      string        // its job's name in the core: "pod NAME" or "group NAME"
	pods     []*corev1.Pod // pending, in name order
	group    *podGroup     // nil for a single pod
	bound    int           // pods of the group already bound
	priority int32         // the highest of its pods
	created  time.Time     // the earliest of its pods
	blocked  string        // why it cannot be placed at all, or ""
}

// groupCounts counts pods of each pod group (namespace/name) that are not
// pending: bound, or gated (spec.schedulingGates), which count as missing
// members until their gates are removed.
type groupCounts struct{ bound, gated map[string]int }

func newGroupCounts() groupCounts {
	return groupCounts{bound: map[string]int{}, gated: map[string]int{}}
}

// count adds n to group's count in to; a count that comes to 0 is
// dropped. The group "" is none.
func (groupCounts) count(to map[string]int, group string, n int) {
	if group == "" {
		return
	}
	if to[group] += n; to[group] == 0 {
		delete(to, group)
	}
}

// buildUnits groups pending pods into units and orders them: higher
// priority first, then older, then by name.
// unitName is the core's name of the unit a pod belongs to: "group
// namespace/name" for a pod of a pod group, else "pod namespace/name".
// Pending and running units, faults and preemptions all go by it.
func unitName(p *corev1.Pod) string {
	if g := GroupName(p); g != "" {
		return groupUnitPrefix + p.Namespace + "/" + g
	}
	return "pod " + podKey(p)
}

// groupUnitPrefix starts the name of a unit of several pods; any other
// unit is one pod, and no two pods share its name.
const groupUnitPrefix = "group "

func buildUnits(pending []*corev1.Pod, groups map[string]*podGroup, members groupCounts) []*unit {
	byName := map[string]*unit{}
	var units []*unit
	for _, p := range pending {
		name, key, group := p.Namespace+"/"+p.Name, "pod ", (*podGroup)(nil)
		if g := GroupName(p); g != "" {
			name, key = p.Namespace+"/"+g, "group "
			group = groups[name]
		}
		u := byName[key+name]
		if u == nil {
			u = &unit{name: name, job: key + name, group: group, priority: podPriority(p), created: podQueuedSince(p)}
			byName[key+name] = u
			units = append(units, u)
		}
		u.pods = append(u.pods, p)
		u.priority = max(u.priority, podPriority(p))
		if t := podQueuedSince(p); t.Before(u.created) {
			u.created = t
		}
	}
	for _, u := range units {
		sort.Slice(u.pods, func(a, b int) bool { return u.pods[a].Name < u.pods[b].Name })
		u.blocked = blockedReason(u, members)
		if u.group != nil {
			u.bound = members.bound[u.name]
		}
	}
	sort.SliceStable(units, func(a, b int) bool { return unitLess(units[a], units[b]) })
	return units
}

func unitLess(a, b *unit) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	if !a.created.Equal(b.created) {
		return a.created.Before(b.created)
	}
	return a.name < b.name
}

// blockedReason says why a pod group cannot be placed whatever the nodes:
// its PodGroup does not exist, or it has fewer pods than minMember (gated
// pods are missing ones).
func blockedReason(u *unit, members groupCounts) string {
	label, kind := groupOf(u.pods[0])
	switch {
	case label == "":
		return ""
	case u.group == nil:
		return fmt.Sprintf("pod group %q does not exist: create %s named %s in namespace %s",
			label, groupResource(kind), strings.TrimPrefix(label, kind+":"), u.pods[0].Namespace)
	case u.group.Invalid != "":
		return fmt.Sprintf("pod group %s: %s", u.group.Name, u.group.Invalid)
	}
	have := len(u.pods) + members.bound[u.name]
	if have < u.group.MinMember {
		field := "minMember"
		if u.group.Native {
			field = "minCount"
		}
		gated := ""
		if n := members.gated[u.name]; n > 0 {
			gated = fmt.Sprintf(" (%d more with scheduling gates)", n)
		}
		return fmt.Sprintf("pod group %s has %d of its %s %d pods%s; waiting for the rest before any starts",
			u.group.Name, have, field, u.group.MinMember, gated)
	}
	return ""
}

func podPriority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// queue is the Queue the unit is charged to: its first pod's.
func (u *unit) queue() string { return u.pods[0].Labels[LabelQueue] }

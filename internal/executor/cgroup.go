package executor

import (
	"fmt"
	"slices"
	"strings"
)

// Cgroups is where tasks get cgroups of their own: a directory under the
// server's own cgroup in each cgroup hierarchy that this process may
// write (OpenCgroups finds them). A task's cgroup is named after its ID
// in each of them. It makes the end of a task certain (the whole cgroup
// is killed, so no process it left behind keeps a GPU), its memory and
// CPU limits the kernel's, and its GPUs the only ones it can open.
type Cgroups struct {
	Name        string      // the directory made under the server's cgroup in each hierarchy
	Hierarchies []Hierarchy // at least one
	// Devices is how a task's device access is fenced: "v1" (the
	// devices controller), "bpf" (an eBPF device program on its v2
	// cgroup) or "" (it is not).
	Devices string `json:",omitempty"`
	// Problems says what does not hold on this machine, in words, such
	// as a missing memory controller.
	Problems []string `json:",omitempty"`
}

// Hierarchy is one cgroup hierarchy that tasks get cgroups in.
type Hierarchy struct {
	Dir  string // the tasks' cgroups are made in here
	Home string // the server's own cgroup, where a supervisor returns after starting its task
	V2   bool   // the unified hierarchy (cgroup2)
	// Controllers are what the hierarchy enforces on the tasks: memory,
	// cpu, pids, devices and freezer on v1; on v2, memory, cpu and pids
	// when they could be enabled for the tasks' cgroups.
	Controllers []string `json:",omitempty"`
}

// usedControllers are the v1 controllers tasks get cgroups in.
var usedControllers = []string{"memory", "cpu", "pids", "devices", "freezer"}

// Has reports whether a hierarchy enforces controller ctrl on the tasks.
func (c *Cgroups) Has(ctrl string) bool {
	if c == nil {
		return false
	}
	for _, h := range c.Hierarchies {
		if slices.Contains(h.Controllers, ctrl) {
			return true
		}
	}
	return false
}

// String says in one line what the tasks' cgroups are and enforce.
func (c *Cgroups) String() string {
	if c == nil {
		return "no cgroups"
	}
	var parts []string
	for _, h := range c.Hierarchies {
		v := "v1"
		if h.V2 {
			v = "v2"
		}
		ctrls := strings.Join(h.Controllers, ",")
		if ctrls == "" {
			ctrls = "no controllers"
		}
		parts = append(parts, fmt.Sprintf("%s (%s) %s", v, ctrls, h.Dir))
	}
	devices := map[string]string{"v1": "the v1 devices controller", "bpf": "an eBPF device program", "": "nothing"}[c.Devices]
	return fmt.Sprintf("cgroup %s; GPU devices fenced by %s", strings.Join(parts, ", "), devices)
}

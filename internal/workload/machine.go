package workload

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/fleet"
)

// FleetLinePrefix starts the comment line of a jobs file that says which
// machines the jobs ran on, so that a replay runs on them:
//
//	# fleet: nodes=1 gpus_per_node=8 gpu_model=H100-80GB mig=none time_slices=4 cpu_milli=64000 mem_mib=524288
const FleetLinePrefix = "# fleet:"

// Machines are the identical nodes a recorded workload ran on (a shared
// box is one), as a jobs file's fleet line gives them.
type Machines struct {
	Nodes       int
	GPUsPerNode int
	GPUModel    string // catalog name
	MIG         bool   // dynamic MIG
	TimeSlices  int    // shares per GPU when MIG is off (0 or 1: none)
	CPUMilli    int64
	MemoryMiB   int64
}

// fleetKeys are the fleet line's keys, in the order Line writes them.
var fleetKeys = []string{"nodes", "gpus_per_node", "gpu_model", "mig", "time_slices", "cpu_milli", "mem_mib"}

// Line is m as a jobs file's fleet line, without a newline.
func (m Machines) Line() string {
	mig := "none"
	if m.MIG {
		mig = "dynamic"
	}
	return fmt.Sprintf("%s nodes=%d gpus_per_node=%d gpu_model=%s mig=%s time_slices=%d cpu_milli=%d mem_mib=%d",
		FleetLinePrefix, m.Nodes, m.GPUsPerNode, m.GPUModel, mig, m.TimeSlices, m.CPUMilli, m.MemoryMiB)
}

// String says what m is, for a person.
func (m Machines) String() string {
	s := fmt.Sprintf("%d node(s) of %d %s", m.Nodes, m.GPUsPerNode, m.GPUModel)
	switch {
	case m.MIG:
		s += " (MIG)"
	case m.TimeSlices > 1:
		s += fmt.Sprintf(" (%d time slices each)", m.TimeSlices)
	}
	return s
}

// Fleet builds the nodes m describes.
func (m Machines) Fleet() (*fleet.Fleet, error) {
	syn := fleet.Synthetic{Nodes: m.Nodes, GPUsPerNode: m.GPUsPerNode, GPUModel: m.GPUModel, CPUMilli: m.CPUMilli, MemoryMiB: m.MemoryMiB}
	if m.MIG {
		syn.MIG = fleet.MIGDynamic
	}
	f, err := syn.Build()
	if err != nil {
		return nil, err
	}
	if !m.MIG && m.TimeSlices > 1 {
		for i := range f.Nodes {
			f.Nodes[i].TimeSlices = m.TimeSlices
		}
	}
	return f, f.Validate()
}

// readFleetLine finds the fleet line among the comment lines before a jobs
// file's header and reads it; nil when there is none.
func readFleetLine(data []byte, name string) (*Machines, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(text, "#") {
			if text == "" {
				continue
			}
			return nil, nil // the header: comments after it are rows' business
		}
		if rest, ok := strings.CutPrefix(text, FleetLinePrefix); ok {
			m, err := parseFleetLine(rest)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: fleet line: %w", name, line, err)
			}
			return m, nil
		}
	}
	return nil, nil
}

// parseFleetLine reads the key=value pairs after "# fleet:".
func parseFleetLine(s string) (*Machines, error) {
	m := &Machines{}
	seen := map[string]bool{}
	for _, field := range strings.Fields(s) {
		key, value, ok := strings.Cut(field, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want key=value", field)
		}
		if seen[key] {
			return nil, fmt.Errorf("%s given twice", key)
		}
		seen[key] = true
		if err := m.set(key, value); err != nil {
			return nil, err
		}
	}
	for _, k := range []string{"nodes", "gpus_per_node", "gpu_model"} {
		if !seen[k] {
			return nil, fmt.Errorf("no %s (want %s)", k, strings.Join(fleetKeys, ", "))
		}
	}
	return m, nil
}

func (m *Machines) set(key, value string) error {
	number := func(v *int64, least int64) error {
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < least {
			return fmt.Errorf("%s=%s: want a whole number of at least %d", key, value, least)
		}
		*v = n
		return nil
	}
	var n int64
	var err error
	switch key {
	case "nodes":
		err = number(&n, 1)
		m.Nodes = int(n)
	case "gpus_per_node":
		err = number(&n, 0)
		m.GPUsPerNode = int(n)
	case "time_slices":
		err = number(&n, 0)
		m.TimeSlices = int(n)
	case "cpu_milli":
		err = number(&m.CPUMilli, 0)
	case "mem_mib":
		err = number(&m.MemoryMiB, 0)
	case "gpu_model":
		m.GPUModel = value
	case "mig":
		if value != "none" && value != "dynamic" {
			return fmt.Errorf("mig=%s: want none or dynamic", value)
		}
		m.MIG = value == "dynamic"
	default:
		return fmt.Errorf("unknown key %q (known: %s)", key, strings.Join(fleetKeys, ", "))
	}
	return err
}

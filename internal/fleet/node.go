package fleet

import (
	"errors"
	"fmt"

	"github.com/corral-sched/corral/internal/gpu"
)

// validate reports everything wrong with one node.
func (n *Node) validate(levels int) error {
	if n.Name == "" {
		return errors.New("node with no name")
	}
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("node %q: "+format, append([]any{n.Name}, args...)...))
	}
	if len(n.Domains) != levels {
		add("has %d topology domains %v, the fleet has %d levels", len(n.Domains), n.Domains, levels)
	}
	for l, d := range n.Domains {
		if d == "" {
			add("empty domain name at level %d", l)
		}
	}
	if n.CPUMilli < 0 || n.MemoryMiB < 0 || n.GPUs < 0 {
		add("negative capacity (cpu %dm, memory %d MiB, gpus %d)", n.CPUMilli, n.MemoryMiB, n.GPUs)
	}
	switch n.Health {
	case "", Healthy, Unhealthy, Cordoned:
	default:
		add("unknown health %q (want healthy, unhealthy or cordoned)", n.Health)
	}
	for _, t := range n.Taints {
		if t == "" {
			add("empty taint")
		}
	}
	if n.TimeSlices < 0 {
		add("negative time slices %d", n.TimeSlices)
	}
	for _, k := range []struct {
		kind    string
		islands [][]int
	}{{"nvlink", n.NVLink}, {"pcie", n.PCIe}, {"numa", n.NUMA}} {
		if err := checkIslands(k.islands, n.GPUs); err != nil {
			add("%s islands: %v", k.kind, err)
		}
	}
	if n.GPUs > 0 {
		if err := n.validateGPUs(); err != nil {
			add("%v", err)
		}
	}
	return errors.Join(errs...)
}

func (n *Node) validateGPUs() error {
	model, err := gpu.Lookup(n.GPUModel)
	if err != nil {
		return err
	}
	switch n.MIG {
	case MIGNone:
		if len(n.MIGLayout) > 0 {
			return errors.New("a MIG layout is given but MIG mode is off")
		}
		return nil
	case MIGStatic, MIGDynamic:
	default:
		return fmt.Errorf("unknown MIG mode %q (want static or dynamic)", n.MIG)
	}
	if !model.MIG {
		return fmt.Errorf("GPU model %s does not support MIG", model.Name)
	}
	if n.TimeSlices > 1 {
		return errors.New("time-slicing and MIG on one node are not supported")
	}
	if _, err := gpu.NewLayout(model, n.MIGLayout...); err != nil {
		return fmt.Errorf("MIG layout: %w", err)
	}
	if n.MIG == MIGStatic && len(n.MIGLayout) == 0 {
		return errors.New("static MIG mode needs a layout")
	}
	return nil
}

// checkIslands reports a GPU index out of range or in two islands.
func checkIslands(islands [][]int, gpus int) error {
	seen := make(map[int]bool)
	for _, island := range islands {
		for _, g := range island {
			if g < 0 || g >= gpus {
				return fmt.Errorf("GPU index %d out of range 0..%d", g, gpus-1)
			}
			if seen[g] {
				return fmt.Errorf("GPU %d is in two islands", g)
			}
			seen[g] = true
		}
	}
	return nil
}

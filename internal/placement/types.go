package placement

import (
	"errors"
	"fmt"
	"strings"
)

// MilliPerGPU is the capacity of one GPU in milli-GPU units.
const MilliPerGPU = 1000

// Node is a machine: CPU, memory and a number of identical GPUs.
type Node struct {
	Name      string
	CPUMilli  int64  // allocatable CPU in milli-cores
	MemoryMiB int64  // allocatable memory in MiB
	GPUs      int    // number of GPUs
	Model     string // GPU model, empty for a CPU-only node
}

// GPUMilli is the node's total GPU capacity in milli-GPU.
func (n Node) GPUMilli() int64 { return int64(n.GPUs) * MilliPerGPU }

// Validate reports the first thing wrong with n.
func (n Node) Validate() error {
	switch {
	case n.Name == "":
		return errors.New("node has no name")
	case n.CPUMilli < 0:
		return fmt.Errorf("node %s: negative cpu_milli %d", n.Name, n.CPUMilli)
	case n.MemoryMiB < 0:
		return fmt.Errorf("node %s: negative memory_mib %d", n.Name, n.MemoryMiB)
	case n.GPUs < 0:
		return fmt.Errorf("node %s: negative gpu count %d", n.Name, n.GPUs)
	case n.GPUs > 0 && n.Model == "":
		return fmt.Errorf("node %s: %d GPUs but no GPU model", n.Name, n.GPUs)
	}
	return nil
}

// Pod is one task: a request for CPU, memory and GPUs.
//
// A pod asks for NumGPU GPUs with GPUMilli of each. A sharing pod has
// NumGPU == 1 and GPUMilli < 1000 and takes part of one GPU; every other GPU
// pod takes whole, fully free GPUs.
type Pod struct {
	Name      string
	CPUMilli  int64
	MemoryMiB int64
	NumGPU    int
	GPUMilli  int64    // per GPU, 0..1000
	Models    []string // allowed GPU models; empty means any
}

// TotalGPUMilli is the pod's whole GPU request.
func (p Pod) TotalGPUMilli() int64 { return int64(p.NumGPU) * p.GPUMilli }

// IsShare reports whether p takes part of a single GPU.
func (p Pod) IsShare() bool { return p.NumGPU == 1 && p.GPUMilli < MilliPerGPU }

// IsGPU reports whether p requests any GPU.
func (p Pod) IsGPU() bool { return p.NumGPU > 0 && p.GPUMilli > 0 }

// Allows reports whether p may run on a GPU of the given model.
func (p Pod) Allows(model string) bool {
	if len(p.Models) == 0 {
		return true
	}
	for _, m := range p.Models {
		if m == model {
			return true
		}
	}
	return false
}

// ModelSpec is the allowed-model set in the openb gpu_spec form ("A|B").
func (p Pod) ModelSpec() string { return strings.Join(p.Models, "|") }

// Validate reports the first thing wrong with p.
func (p Pod) Validate() error {
	switch {
	case p.Name == "":
		return errors.New("pod has no name")
	case p.CPUMilli < 0:
		return fmt.Errorf("pod %s: negative cpu_milli %d", p.Name, p.CPUMilli)
	case p.MemoryMiB < 0:
		return fmt.Errorf("pod %s: negative memory_mib %d", p.Name, p.MemoryMiB)
	case p.NumGPU < 0:
		return fmt.Errorf("pod %s: negative num_gpu %d", p.Name, p.NumGPU)
	case p.GPUMilli < 0 || p.GPUMilli > MilliPerGPU:
		return fmt.Errorf("pod %s: gpu_milli %d outside 0..1000", p.Name, p.GPUMilli)
	case p.NumGPU == 0 && p.GPUMilli != 0:
		return fmt.Errorf("pod %s: gpu_milli %d with num_gpu 0", p.Name, p.GPUMilli)
	case p.NumGPU > 0 && p.GPUMilli == 0:
		return fmt.Errorf("pod %s: num_gpu %d with gpu_milli 0", p.Name, p.NumGPU)
	case p.NumGPU > 1 && p.GPUMilli != MilliPerGPU:
		return fmt.Errorf("pod %s: %d GPUs of %d milli each; only single-GPU pods may share a GPU", p.Name, p.NumGPU, p.GPUMilli)
	}
	return nil
}

// RoundShares returns pods with every share of a GPU rounded up to a whole
// number of 1/replicas of a GPU: what a pod asks for when GPUs are
// time-sliced into replicas (the NVIDIA device plugin's sharing), where a
// pod can only ask for whole replicas. A share that rounds up to a whole
// GPU asks for it. replicas <= 0 keeps every pod as it is.
func RoundShares(pods []Pod, replicas int) []Pod {
	if replicas <= 0 {
		return pods
	}
	out := make([]Pod, len(pods))
	step := int64(MilliPerGPU / replicas)
	for i, p := range pods {
		if p.IsShare() && step > 0 {
			p.GPUMilli = min((p.GPUMilli+step-1)/step*step, MilliPerGPU)
		}
		out[i] = p
	}
	return out
}

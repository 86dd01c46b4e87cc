package workload

import (
	"strings"
	"testing"
)

// A fleet line reads back as the machines it was written from, and builds
// them: the nodes, their GPUs, MIG or time slices, CPU and memory.
func TestFleetLineRoundTrip(t *testing.T) {
	for _, m := range []Machines{
		{Nodes: 1, GPUsPerNode: 8, GPUModel: "H100-80GB", TimeSlices: 4, CPUMilli: 64000, MemoryMiB: 512 << 10},
		{Nodes: 3, GPUsPerNode: 4, GPUModel: "A100-80GB", MIG: true, CPUMilli: 32000, MemoryMiB: 256 << 10},
	} {
		file := "# a history\n" + m.Line() + "\nname,submit_s,duration_s,tenant,tasks,gpus\na,0,60,t,1,1\n"
		jobs, err := ReadJobs(strings.NewReader(file), "h.csv")
		if err != nil {
			t.Fatalf("%s: %v", m.Line(), err)
		}
		if jobs.Machines == nil || *jobs.Machines != m {
			t.Fatalf("%s read back as %+v", m.Line(), jobs.Machines)
		}
		f, err := jobs.Machines.Fleet()
		if err != nil {
			t.Fatal(err)
		}
		n := f.Nodes[0]
		if len(f.Nodes) != m.Nodes || n.GPUs != m.GPUsPerNode || n.GPUModel != m.GPUModel || n.TimeSlices != m.TimeSlices ||
			n.CPUMilli != m.CPUMilli || n.MemoryMiB != m.MemoryMiB || (n.MIG != "") != m.MIG {
			t.Errorf("%s built %d nodes, the first %+v", m.Line(), len(f.Nodes), n)
		}
	}
}

// A file without a fleet line has no machines; a fleet line after the
// header is a comment among rows, not the file's fleet.
func TestFleetLineOnlyBeforeTheHeader(t *testing.T) {
	for _, file := range []string{
		"name,submit_s,duration_s,tenant,tasks\na,0,60,t,1\n",
		"name,submit_s,duration_s,tenant,tasks\n# fleet: nodes=1 gpus_per_node=8 gpu_model=H100\na,0,60,t,1\n",
	} {
		jobs, err := ReadJobs(strings.NewReader(file), "h.csv")
		if err != nil || jobs.Machines != nil {
			t.Errorf("%q: machines %+v, error %v; want none", file, jobs.Machines, err)
		}
	}
}

func TestFleetLineMistakes(t *testing.T) {
	tests := []struct{ line, want string }{
		{"nodes=1 gpus=8 gpu_model=H100", `h.csv:1: fleet line: unknown key "gpus" (known: nodes, gpus_per_node, gpu_model, mig, time_slices, cpu_milli, mem_mib)`},
		{"nodes=0 gpus_per_node=8 gpu_model=H100", "h.csv:1: fleet line: nodes=0: want a whole number of at least 1"},
		{"nodes=1 gpus_per_node=8", "h.csv:1: fleet line: no gpu_model (want nodes, gpus_per_node, gpu_model, mig, time_slices, cpu_milli, mem_mib)"},
		{"nodes=1 nodes=2 gpus_per_node=8 gpu_model=H100", "h.csv:1: fleet line: nodes given twice"},
		{"nodes=1 gpus_per_node=8 gpu_model=H100 mig=static", "h.csv:1: fleet line: mig=static: want none or dynamic"},
		{"nodes=1 gpus_per_node 8", `h.csv:1: fleet line: "gpus_per_node": want key=value`},
	}
	for _, tt := range tests {
		_, err := ReadJobs(strings.NewReader(FleetLinePrefix+" "+tt.line+"\nname,submit_s,duration_s,tenant,tasks\na,0,60,t,1\n"), "h.csv")
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q: error %v, want %q", tt.line, err, tt.want)
		}
	}
}

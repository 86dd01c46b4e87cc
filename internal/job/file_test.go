package job

import (
	"strings"
	"testing"
)

func TestParseJobFile(t *testing.T) {
	src := `
name: pretrain
tenant: team-a
minMember: 16
topology:
  - {level: block, required: true}
groups:
  - name: launcher
    cpu: 2
    memory: 4Gi
    count: 1
  - name: worker
    count: 32
    gpus: 8
    cpu: "96"
    memory: 1Ti
    models: [H100-80GB]
---
name: notebook
mig: 1g.10gb
cpu: 500m
memory: 8Gi
`
	jobs, err := Parse([]byte(src), "jobs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 {
		t.Fatalf("got %d jobs, want 2", len(jobs))
	}
	pre := jobs[0]
	if pre.Tasks() != 33 || pre.MinTasks() != 16 || len(pre.Topology) != 1 || !pre.Topology[0].Required {
		t.Errorf("pretrain = %+v", pre)
	}
	w := pre.Groups[1].Task
	if w.GPUs != 8 || w.CPUMilli != 96000 || w.MemoryMiB != 1<<20 || w.Kind() != Whole {
		t.Errorf("worker demand = %+v", w)
	}
	nb := jobs[1]
	if len(nb.Groups) != 1 || nb.Groups[0].Count != 1 || nb.Groups[0].Task.Kind() != MIG || nb.Groups[0].Task.CPUMilli != 500 {
		t.Errorf("notebook = %+v", nb)
	}
}

func TestParseJobFileErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"unknown field", "name: a\ngpus: 1\ncolour: red\n", `j.yaml:3: job 1: unknown field "colour" in a job (known: name, tenant, priority, minMember, elastic, preemptible, runtime, checkpointEvery, queue, tolerations, topology, groups, byGPUMemory, count, gpus, mig, shares, gpuMemory, gpuMilli, cpu, memory, models)`},
		{"unknown field in a group", "name: a\ngroups:\n  - name: w\n    gpu: 1\n", `j.yaml:4: job 1: unknown field "gpu" in a group (known: name, count, gpus, mig,`},
		{"unknown field in a constraint, second job", "name: a\ngpus: 1\n---\nname: b\ngpus: 1\ntopology: [{level: rack, requird: true}]\n", `j.yaml:6: job 2: unknown field "requird" in a topology constraint (known: level, required, spread, maxPerDomain)`},
		{"bad memory", "name: a\nmemory: 16G\n", `memory: "16G"`},
		{"bad cpu", "name: a\ncpu: lots\n", `cpu: "lots"`},
		{"two GPU kinds", "name: a\ngpus: 1\nmig: 1g.10gb\n", "more than one of"},
		{"negative count", "name: a\ngroups: [{name: w, count: -1}]\n", "count -1"},
		{"minMember too large", "name: a\nminMember: 5\ncount: 4\n", "minMember 5 outside 0..4"},
		{"both forms", "name: a\ngpus: 1\ngroups: [{name: w, count: 1}]\n", "one or the other"},
		{"no name", "gpus: 1\n", "job with no name"},
		{"empty", "", "no jobs"},
		{"gpuMilli whole", "name: a\ngpuMilli: 1000\n", "whole GPU or more"},
		{"bad runtime", "name: a\ngpus: 1\nruntime: soon\n", `runtime "soon"`},
		{"negative runtime", "name: a\ngpus: 1\nruntime: -5m\n", "negative runtime"},
		{"bad checkpoint", "name: a\ngpus: 1\ncheckpointEvery: often\n", `checkpointEvery "often"`},
		{"spread cap without spread", "name: a\ngpus: 1\ntopology: [{level: rack, maxPerDomain: 2}]\n", "needs spread"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "j.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "j.yaml") {
				t.Fatalf("error %v, want one starting with j.yaml and containing %q", err, tc.want)
			}
		})
	}
}

func TestParseJobFileByGPUMemory(t *testing.T) {
	src := `name: ft
byGPUMemory: 600G
cpu: 32
---
name: ft2
byGPUMemory:
  total: 1T
  minPerGPU: 80GB
  models: [H100-80GB, A100-80GB]
`
	jobs, err := Parse([]byte(src), "j.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if a := jobs[0].ByGPUMemory; a == nil || a.TotalMiB != 600<<10 || a.MinPerGPUMiB != 0 || !jobs[0].Asks() {
		t.Errorf("ft asks %+v, want 600Gi", a)
	}
	if g := jobs[0].Groups; len(g) != 1 || g[0].Task.CPUMilli != 32000 || g[0].Count != 1 {
		t.Errorf("ft's task %+v, want one of 32 CPUs", g)
	}
	if a := jobs[1].ByGPUMemory; a == nil || a.TotalMiB != 1<<20 || a.MinPerGPUMiB != 80<<10 || len(a.Models) != 2 || len(jobs[1].Groups) != 0 {
		t.Errorf("ft2 asks %+v with groups %v", a, jobs[1].Groups)
	}
}

func TestParseJobFileByGPUMemoryErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"bad total", "name: a\nbyGPUMemory: 600 gigs\n", `j.yaml:2: job 1: byGPUMemory: total: "600 gigs": want an integer`},
		{"bad minimum", "name: a\nbyGPUMemory:\n  total: 600G\n  minPerGPU: lots\n", `j.yaml:3: job 1: byGPUMemory: minPerGPU: "lots"`},
		{"unknown field", "name: a\nbyGPUMemory:\n  total: 600G\n  perGPU: 80G\n", `j.yaml:4: job 1: unknown field "perGPU" in byGPUMemory (known: minPerGPU, models, total)`},
		{"a list", "name: a\nbyGPUMemory: [600G]\n", `j.yaml:2: job 1: byGPUMemory: want a quantity`},
		{"with gpus", "name: a\nbyGPUMemory: 600G\ngpus: 8\n", `the scheduler picks GPUs, models and count`},
		{"with a count", "name: a\nbyGPUMemory: 600G\ncount: 2\n", `with count 1`},
		{"elastic", "name: a\nbyGPUMemory: 600G\nelastic: true\n", `minMember and elastic do not apply`},
		{"zero", "name: a\nbyGPUMemory: 0G\n", `must be positive`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "j.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

package job

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/corral-sched/corral/internal/quantity"
)

// A job file holds one job per YAML document (separated by ---):
//
//	name: pretrain
//	tenant: team-a
//	priority: 10
//	minMember: 16          # start with at least 16 tasks; omit for all
//	elastic: true
//	preemptible: false
//	runtime: 90m           # expected run time; short preemptible jobs may borrow hot spares
//	checkpointEvery: 30m   # how often it saves progress
//	queue: research        # the queue it is submitted to
//	tolerations: [spot]    # node taints it accepts
//	topology:
//	  - {level: block, required: true}        # all tasks in one block
//	  - {level: rack, spread: true, maxPerDomain: 4}
//	groups:
//	  - name: worker
//	    count: 32
//	    gpus: 8               # or mig: 1g.10gb, shares: 1, gpuMemory: 10Gi, gpuMilli: 500
//	    cpu: 96               # cores, or millicores such as 500m
//	    memory: 1Ti           # Mi, Gi or Ti
//	    models: [H100-80GB]
//
// A job may ask for GPU memory in all instead of GPUs, and the scheduler
// picks the model and the count (gang.State.Resolve); cpu and memory are
// then each task's, and count, gpus and models are not given:
//
//	name: finetune
//	byGPUMemory: 600G      # or {total: 600G, minPerGPU: 80G, models: [H100-80GB, A100-80GB]}
//	cpu: 32
//
// A job of one group may put the group's fields at the top level instead of
// under groups (count defaults to 1 there).
type fileJob struct {
	Name        string           `yaml:"name"`
	Tenant      string           `yaml:"tenant"`
	Priority    int              `yaml:"priority"`
	MinMember   int              `yaml:"minMember"`
	Elastic     bool             `yaml:"elastic"`
	Preemptible bool             `yaml:"preemptible"`
	Runtime     string           `yaml:"runtime"`
	Checkpoint  string           `yaml:"checkpointEvery"`
	Queue       string           `yaml:"queue"`
	Tolerations []string         `yaml:"tolerations"`
	Topology    []fileConstraint `yaml:"topology"`
	Groups      []fileGroup      `yaml:"groups"`
	ByGPUMemory *fileAsk         `yaml:"byGPUMemory"`
	fileTask    `yaml:",inline"`
}

type fileConstraint struct {
	Level        string `yaml:"level"`
	Required     bool   `yaml:"required"`
	Spread       bool   `yaml:"spread"`
	MaxPerDomain int    `yaml:"maxPerDomain"`
}

type fileGroup struct {
	Name     string `yaml:"name"`
	fileTask `yaml:",inline"`
}

type fileTask struct {
	Count     int      `yaml:"count"`
	GPUs      int      `yaml:"gpus"`
	MIG       string   `yaml:"mig"`
	Shares    int      `yaml:"shares"`
	GPUMemory string   `yaml:"gpuMemory"`
	GPUMilli  int      `yaml:"gpuMilli"`
	CPU       string   `yaml:"cpu"`
	Memory    string   `yaml:"memory"`
	Models    []string `yaml:"models"`
}

// Load reads the jobs in the file at path.
func Load(path string) ([]*Job, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read job file: %w", err)
	}
	return Parse(data, path)
}

// Parse reads every job in data; source names the data in errors. Errors
// name the source, the document and, where known, the line.
func Parse(data []byte, source string) ([]*Job, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var jobs []*Job
	for doc := 1; ; doc++ {
		var fj fileJob
		err := dec.Decode(&fj)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, decodeError(source, doc, err)
		}
		j, err := fj.job()
		if err == nil {
			err = j.Validate()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: job %d: %w", source, doc, err)
		}
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%s: no jobs", source)
	}
	return jobs, nil
}

func (fj *fileJob) job() (*Job, error) {
	j := &Job{Name: fj.Name, Tenant: fj.Tenant, Priority: fj.Priority, MinMember: fj.MinMember,
		Elastic: fj.Elastic, Preemptible: fj.Preemptible}
	var err error
	if j.Runtime, err = duration("runtime", fj.Runtime); err != nil {
		return nil, err
	}
	if j.CheckpointEvery, err = duration("checkpointEvery", fj.Checkpoint); err != nil {
		return nil, err
	}
	j.Queue, j.Tolerations = fj.Queue, fj.Tolerations
	if fj.ByGPUMemory != nil {
		j.ByGPUMemory = fj.ByGPUMemory.ask
	}
	for _, c := range fj.Topology {
		j.Topology = append(j.Topology, Constraint(c))
	}
	groups := fj.Groups
	if fj.fileTask.set() {
		if len(groups) > 0 {
			return nil, errors.New("task fields at the top level and groups together; use one or the other")
		}
		top := fileGroup{Name: "task", fileTask: fj.fileTask}
		if top.Count == 0 {
			top.Count = 1
		}
		groups = []fileGroup{top}
	}
	for i, g := range groups {
		grp, err := g.group(i)
		if err != nil {
			return nil, err
		}
		j.Groups = append(j.Groups, grp)
	}
	return j, nil
}

// set reports whether any task field is given.
func (t fileTask) set() bool {
	return t.Count != 0 || t.GPUs != 0 || t.MIG != "" || t.Shares != 0 || t.GPUMemory != "" ||
		t.GPUMilli != 0 || t.CPU != "" || t.Memory != "" || len(t.Models) > 0
}

func (g fileGroup) group(i int) (Group, error) {
	name := g.Name
	if name == "" {
		name = fmt.Sprintf("group%d", i)
	}
	d := Demand{GPUs: g.GPUs, MIG: g.MIG, Shares: g.Shares, GPUMilli: g.GPUMilli, Models: g.Models}
	var err error
	if g.CPU != "" {
		if d.CPUMilli, err = quantity.CPU(g.CPU); err != nil {
			return Group{}, fmt.Errorf("group %q: cpu: %w", name, err)
		}
	}
	if g.Memory != "" {
		if d.MemoryMiB, err = quantity.Memory(g.Memory); err != nil {
			return Group{}, fmt.Errorf("group %q: memory: %w", name, err)
		}
	}
	if g.GPUMemory != "" {
		if d.GPUMemoryMiB, err = quantity.Memory(g.GPUMemory); err != nil {
			return Group{}, fmt.Errorf("group %q: gpuMemory: %w", name, err)
		}
	}
	return Group{Name: name, Count: g.Count, Task: d}, nil
}

// duration reads an optional duration field.
func duration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a duration such as 90m or 2h", field, s)
	}
	return d, nil
}

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

const placeUsage = `Usage: corral place --fleet FLEET.yaml [--json OUT] JOBS.yaml...

Places the jobs of each job file, in order, on an empty fleet described by a
fleet file, and prints where every task lands or why a job does not fit.
Each job is a gang: all of its tasks are placed in one decision or none are,
in the tightest topology domain that holds them.

Fleet files: see examples/fleets/README.md. Job files hold one job per YAML
document:

  name: pretrain
  topology: [{level: block, required: true}]
  groups: [{name: worker, count: 8, gpus: 8, cpu: 32, memory: 256Gi}]
  ---
  {name: notebook, mig: 1g.10gb, cpu: 2, memory: 16Gi}
  ---
  {name: finetune, byGPUMemory: 600G, cpu: 32}   # the scheduler picks model and count

Example:
  corral place --fleet examples/fleets/h100-superpod.yaml examples/jobs/mixed.yaml

Flags:
`

// placedJob is one line of corral place's JSON output.
type placedJob struct {
	Job     string         `json:"job"`
	Placed  bool           `json:"placed"`
	Span    map[string]int `json:"span,omitempty"`
	Shape   string         `json:"shape,omitempty"` // what the scheduler chose for a job asking by GPU memory
	Tasks   []gang.Task    `json:"tasks,omitempty"`
	Reasons []string       `json:"reasons,omitempty"`
	// Filtered counts the nodes that hold none of its tasks, by the
	// core's reason codes.
	Filtered []filteredNodes `json:"filtered,omitempty"`
}

// filteredNodes is how many nodes one reason kept from a task.
type filteredNodes struct {
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
	Nodes  int    `json:"nodes"`
}

// filteredOf is unfit's node counts for --json.
func filteredOf(unfit *gang.Unfit) []filteredNodes {
	var out []filteredNodes
	for _, c := range unfit.Filtered() {
		out = append(out, filteredNodes{Reason: c.Reason.Code(), Detail: c.Detail, Nodes: c.Nodes})
	}
	return out
}

func runPlace(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("place", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fleetPath := fs.String("fleet", "", "fleet file (YAML); required")
	jsonPath := fs.String("json", "", "also write every decision as JSON to this file")
	fs.Usage = func() { fmt.Fprint(stderr, placeUsage); fs.PrintDefaults() }
	if err := parseFlags(fs, "", args); err != nil {
		return err
	}
	if *fleetPath == "" || fs.NArg() == 0 {
		return usageErrorf("need --fleet and at least one job file")
	}
	f, err := fleet.Load(*fleetPath)
	if err != nil {
		return err
	}
	var jobs []*job.Job
	for _, path := range fs.Args() {
		js, err := job.Load(path)
		if err != nil {
			return err
		}
		if err := checkCatalog(path, js); err != nil {
			return err
		}
		jobs = append(jobs, js...)
	}
	state, err := gang.New(f)
	if err != nil {
		return err
	}
	results := placeAll(state, jobs)
	printPlacements(stdout, f, results)
	if *jsonPath != "" {
		return writePlacements(*jsonPath, results)
	}
	return nil
}

func placeAll(state *gang.State, jobs []*job.Job) []placedJob {
	levels := append(append([]string{}, state.Fleet().Levels...), fleet.NodeLevel)
	out := make([]placedJob, 0, len(jobs))
	for _, j := range jobs {
		p, unfit := state.Place(j)
		if unfit != nil {
			out = append(out, placedJob{Job: j.Name, Reasons: unfit.Lines(), Filtered: filteredOf(unfit)})
			continue
		}
		span := map[string]int{}
		for d, n := range p.Span {
			span[levels[d]] = n
		}
		out = append(out, placedJob{Job: j.Name, Placed: true, Span: span, Tasks: p.Tasks, Shape: shapeOf(p.Spec())})
	}
	return out
}

func printPlacements(w io.Writer, f *fleet.Fleet, results []placedJob) {
	levels := append(append([]string{}, f.Levels...), fleet.NodeLevel)
	placed := 0
	for _, r := range results {
		if !r.Placed {
			fmt.Fprintf(w, "%-20s does not fit: %s\n", r.Job, strings.Join(r.Reasons, "; "))
			continue
		}
		placed++
		var span []string
		for _, l := range levels {
			span = append(span, count(r.Span[l], l))
		}
		fmt.Fprintf(w, "%-20s %s on %s: %s%s\n", r.Job, count(len(r.Tasks), "task"), strings.Join(span, ", "), taskSummary(r.Tasks), r.Shape)
	}
	fmt.Fprintf(w, "\n%d of %d jobs placed\n", placed, len(results))
}

// shapeOf says, for a job that asked by GPU memory, what was chosen.
func shapeOf(j *job.Job) string {
	if j == nil || j.Shape == nil || j.ByGPUMemory == nil {
		return ""
	}
	return fmt.Sprintf("; chose %s for %s", j.Shape, j.ByGPUMemory)
}

// taskSummary names the first few nodes a job's tasks landed on.
func taskSummary(tasks []gang.Task) string {
	var names []string
	seen := map[string]bool{}
	for _, t := range tasks {
		if !seen[t.NodeName] {
			seen[t.NodeName] = true
			names = append(names, t.NodeName)
		}
	}
	if len(names) > 4 {
		return fmt.Sprintf("%s ... (%d nodes)", strings.Join(names[:4], " "), len(names))
	}
	return strings.Join(names, " ")
}

func writePlacements(path string, results []placedJob) error {
	data, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write placements: %w", err)
	}
	return nil
}

func count(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

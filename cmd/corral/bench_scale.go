package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

// The scale targets of the issue, met on a 10,000-node fleet of 8-GPU nodes.
const (
	scaleMinDecisionsPerSec = 10_000
	scaleMaxP99DecisionMs   = 1.0
	scaleMaxGang512P99Ms    = 20.0
	scaleMaxMixedGangsSec   = 5.0 // for 1,000 gangs; pro-rated for --gangs
	scaleGangGPUs           = 512
	migUnitsPerGPU          = 8 // memory slices of an H100 or A100: the unit of occupancy
	scaleMIGModel           = "A100-80GB"
)

// scaleOptions are the flags of corral bench scale.
type scaleOptions struct {
	nodes, gpusPerNode, migPct   int
	seed                         uint64
	decisions, gangTrials, gangs int
	jsonPath, cpuProfile         string
	quiet, pinWhole              bool
}

func (o *scaleOptions) flags(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("corral bench scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.nodes, "nodes", 10000, "nodes in the synthetic fleet")
	fs.IntVar(&o.gpusPerNode, "gpus-per-node", 8, "GPUs per node, 1 to 64")
	fs.IntVar(&o.migPct, "mig-pct", 20, "percent of racks of "+scaleMIGModel+" in dynamic MIG mode in the pod stream (0 to 100)")
	fs.BoolVar(&o.pinWhole, "pin-whole", true, "1-GPU pods ask for "+fleet.DefaultGPUModel+" (false: they may take MIG nodes' GPUs whole)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the PCG streams; one seed gives the same decisions every run")
	fs.IntVar(&o.decisions, "decisions", 0, "pod decisions in the steady-state stream; 0: 20 per node")
	fs.IntVar(&o.gangTrials, "gang-trials", 200, "512-GPU gang decisions on the fragmented fleet")
	fs.IntVar(&o.gangs, "gangs", 1000, "gangs in the mixed-gang run")
	fs.StringVar(&o.jsonPath, "json", "", "write the results as JSON to this file")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: corral bench scale [flags]

Measures how fast corral decides on a large synthetic fleet: zone > block >
rack, 16 nodes a rack, 32 racks (512 nodes) a block, 4 blocks a zone, each
node 192 cores, 2 TiB and --gpus-per-node GPUs (G below). In the pod stream
--mig-pct of the racks (racks 0, 5, 10, ... at 20%%) hold A100-80GB in
dynamic MIG mode (slices made on demand) and the others H100-80GB given
whole; the gang phases use a fresh fleet of --nodes H100-80GB nodes.
Only Place and Release calls are timed (time.Now around each call), not
building jobs or the benchmark's bookkeeping. It runs on one goroutine, and
one seed gives the same decisions on every run; only the times differ.

Example:
  corral bench scale --nodes 10000 --gpus-per-node 8 --json results.json

Phases and metrics (JSON field names):
  build        fleet_build_seconds, state_build_seconds: making the fleet
               and gang.New over it. heap_bytes: HeapAlloc after a GC with
               the fleet and its empty state live; fleet_heap_bytes and
               state_heap_bytes are their shares above the baseline.
  pod stream   1-GPU pods (50%%, asking for H100 unless --pin-whole=false)
               and MIG pods 1g.10gb / 2g.20gb / 3g.40gb (25/15/10%%; only
               the kinds the fleet has nodes for). Each
               pod is one Place: a decision. A warm-up (untimed) fills the
               fleet to 50%%; then a target occupancy rises to 80%% and falls
               back to 50%% twice, and random running pods are released
               whenever occupancy is above it. Occupancy counts GPU eighths:
               a whole GPU is 8, a MIG pod its memory slices (1, 2 or 4).
               decisions_per_sec: decisions / wall time of the stream loop,
               releases included; decisions_per_sec_place_only: decisions /
               time inside Place. p50/p90/p99/p999/max_decision_ms: latency
               of each Place, placed or not; decisions_over_1ms counts the
               slow ones. Releases are not decisions: releases and
               p99_release_ms report them apart.
  gang512      A fresh state is filled with random 1..G-GPU one-task jobs
               until one does not fit, then random jobs are released down to
               70%%, which scatters the free GPUs over nodes and blocks. Each
               trial places one 512-GPU gang with a required block
               constraint (even trials 512/G tasks of G GPUs, odd trials
               512/(G/2) tasks of G/2), releases it if placed, then churns 16
               fill jobs (untimed). gang512_p50/p99/max_ms: latency of each
               Place, placed or proven not to fit; gang512_placed and
               gang512_unfit count each; gang512_shapes splits them by shape.
  mixed gangs  A fresh state gets a background of 1..G-GPU jobs (to 30%%,
               then released at random to 20%%), then --gangs gangs of
               1..512/G tasks of G GPUs: 40%% unconstrained, 40%% with a
               required block, 20%% with a required rack (at most 16 tasks).
               Before each, the oldest gangs are released while occupancy
               plus the new gang would pass 80%%. mixed_gangs_seconds: time
               inside Place only (what the target bounds);
               mixed_gangs_loop_seconds: the whole loop, releases included.

Targets (the "pass" object): decisions_per_sec >= %d, p99_decision_ms <= %g,
gang512_p99_ms <= %g, mixed_gangs_seconds <= %g per 1,000 gangs.

Flags:
`, scaleMinDecisionsPerSec, scaleMaxP99DecisionMs, scaleMaxGang512P99Ms, scaleMaxMixedGangsSec)
		fs.PrintDefaults()
	}
	return fs
}

func (o *scaleOptions) check() error {
	switch {
	case o.nodes < 1 || o.nodes > 1_000_000:
		return fmt.Errorf("--nodes %d: want 1 to 1000000 nodes", o.nodes)
	case o.gpusPerNode < 1 || o.gpusPerNode > 64:
		return fmt.Errorf("--gpus-per-node %d: want 1 to 64 GPUs per node", o.gpusPerNode)
	case o.migPct < 0 || o.migPct > 100:
		return fmt.Errorf("--mig-pct %d: want a percentage, 0 to 100", o.migPct)
	case o.decisions < 0:
		return fmt.Errorf("--decisions %d: want 0 (20 per node) or more", o.decisions)
	case o.gangTrials < 1:
		return fmt.Errorf("--gang-trials %d: want at least 1", o.gangTrials)
	case o.gangs < 1:
		return fmt.Errorf("--gangs %d: want at least 1", o.gangs)
	}
	return nil
}

func runBenchScale(args []string, stdout, stderr io.Writer) (err error) {
	var o scaleOptions
	fs := o.flags(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags only; see -h)", fs.Arg(0))
	}
	if err := o.check(); err != nil {
		return err
	}
	if o.decisions == 0 {
		o.decisions = 20 * o.nodes
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			if cerr := f.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("cpu profile: %w", cerr)
			}
		}()
	}
	res, err := o.run(stderr)
	if err != nil {
		return err
	}
	writeScaleTable(stdout, res)
	if o.jsonPath != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return fmt.Errorf("encode json: %w", err)
		}
		if err := os.WriteFile(o.jsonPath, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("write json: %w", err)
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", o.jsonPath)
	}
	return nil
}

// scaleJSON is the stable machine-readable output of corral bench scale.
// Times are in the units their names say; latencies are per Place call.
type scaleJSON struct {
	Nodes       int    `json:"nodes"`
	WholeNodes  int    `json:"whole_gpu_nodes"`
	MIGNodes    int    `json:"mig_nodes"`
	GPUsPerNode int    `json:"gpus_per_node"`
	GPUs        int    `json:"gpus"`
	GPUModel    string `json:"gpu_model"`
	MIGModel    string `json:"mig_gpu_model"`
	PinWhole    bool   `json:"pin_whole"`
	Seed        uint64 `json:"seed"`
	GoVersion   string `json:"go_version"`
	GOOS        string `json:"goos"`
	GOARCH      string `json:"goarch"`
	GOMAXPROCS  int    `json:"gomaxprocs"`
	NumCPU      int    `json:"num_cpu"`

	FleetBuildSeconds float64 `json:"fleet_build_seconds"`
	StateBuildSeconds float64 `json:"state_build_seconds"`
	HeapBytes         uint64  `json:"heap_bytes"`
	FleetHeapBytes    int64   `json:"fleet_heap_bytes"`
	StateHeapBytes    int64   `json:"state_heap_bytes"`

	Decisions                int     `json:"decisions"`
	DecisionsPlaced          int     `json:"decisions_placed"`
	DecisionsUnfit           int     `json:"decisions_unfit"`
	DecisionsUnfitMIG        int     `json:"decisions_unfit_mig"`
	WarmupPlaced             int     `json:"warmup_placed"`
	Releases                 int     `json:"releases"`
	StreamSeconds            float64 `json:"stream_seconds"`
	DecisionsPerSec          float64 `json:"decisions_per_sec"`
	DecisionsPerSecPlaceOnly float64 `json:"decisions_per_sec_place_only"`
	P50DecisionMs            float64 `json:"p50_decision_ms"`
	P90DecisionMs            float64 `json:"p90_decision_ms"`
	P99DecisionMs            float64 `json:"p99_decision_ms"`
	P999DecisionMs           float64 `json:"p999_decision_ms"`
	MaxDecisionMs            float64 `json:"max_decision_ms"`
	DecisionsOver1ms         int     `json:"decisions_over_1ms"`
	P99ReleaseMs             float64 `json:"p99_release_ms"`
	OccupancyMinPct          float64 `json:"occupancy_min_pct"`
	OccupancyMeanPct         float64 `json:"occupancy_mean_pct"`
	OccupancyMaxPct          float64 `json:"occupancy_max_pct"`

	Gang512Trials         int            `json:"gang512_trials"`
	Gang512Placed         int            `json:"gang512_placed"`
	Gang512Unfit          int            `json:"gang512_unfit"`
	Gang512P50Ms          float64        `json:"gang512_p50_ms"`
	Gang512P99Ms          float64        `json:"gang512_p99_ms"`
	Gang512MaxMs          float64        `json:"gang512_max_ms"`
	Gang512Shapes         []gangShapeRes `json:"gang512_shapes"`
	Gang512OccupancyPct   float64        `json:"gang512_occupancy_pct"`
	Gang512FreeNodes      int            `json:"gang512_free_nodes"`
	Gang512HalfFreeNodes  int            `json:"gang512_half_free_nodes"`
	Gang512FillJobs       int            `json:"gang512_fill_jobs"`
	Gang512FillPeakPct    float64        `json:"gang512_fill_peak_pct"`
	MixedGangs            int            `json:"mixed_gangs"`
	MixedGangsPlaced      int            `json:"mixed_gangs_placed"`
	MixedGangsUnfit       int            `json:"mixed_gangs_unfit"`
	MixedGangsReleased    int            `json:"mixed_gangs_released"`
	MixedGangsGPUsPlaced  int            `json:"mixed_gangs_gpus_placed"`
	MixedGangsSeconds     float64        `json:"mixed_gangs_seconds"`
	MixedGangsLoopSeconds float64        `json:"mixed_gangs_loop_seconds"`
	MixedGangsP50Ms       float64        `json:"mixed_gangs_p50_ms"`
	MixedGangsP99Ms       float64        `json:"mixed_gangs_p99_ms"`
	MixedGangsMaxMs       float64        `json:"mixed_gangs_max_ms"`

	Thresholds scaleThresholds `json:"thresholds"`
	Pass       scalePass       `json:"pass"`
}

type gangShapeRes struct {
	Tasks       int     `json:"tasks"`
	GPUsPerTask int     `json:"gpus_per_task"`
	Trials      int     `json:"trials"`
	Placed      int     `json:"placed"`
	Unfit       int     `json:"unfit"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
}

type scaleThresholds struct {
	MinDecisionsPerSec   float64 `json:"min_decisions_per_sec"`
	MaxP99DecisionMs     float64 `json:"max_p99_decision_ms"`
	MaxGang512P99Ms      float64 `json:"max_gang512_p99_ms"`
	MaxMixedGangsSeconds float64 `json:"max_mixed_gangs_seconds"` // 5 s per 1,000 gangs
}

type scalePass struct {
	DecisionsPerSec bool `json:"decisions_per_sec"`
	P99Decision     bool `json:"p99_decision_ms"`
	Gang512P99      bool `json:"gang512_p99_ms"`
	MixedGangs      bool `json:"mixed_gangs_seconds"`
	All             bool `json:"all"`
}

// run builds the fleet and runs the three phases in order.
func (o *scaleOptions) run(stderr io.Writer) (*scaleJSON, error) {
	res := &scaleJSON{
		Nodes: o.nodes, GPUsPerNode: o.gpusPerNode, GPUModel: fleet.DefaultGPUModel, MIGModel: scaleMIGModel,
		PinWhole: o.pinWhole, Seed: o.seed,
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
	}
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	base := m.HeapAlloc

	start := time.Now()
	f, migNodes, err := scaleFleet(o.nodes, o.gpusPerNode, o.migPct)
	if err != nil {
		return nil, err
	}
	res.FleetBuildSeconds = time.Since(start).Seconds()
	runtime.GC()
	runtime.ReadMemStats(&m)
	fleetHeap := m.HeapAlloc

	start = time.Now()
	s, err := gang.New(f)
	if err != nil {
		return nil, err
	}
	res.StateBuildSeconds = time.Since(start).Seconds()
	runtime.GC()
	runtime.ReadMemStats(&m)
	res.HeapBytes = m.HeapAlloc
	res.FleetHeapBytes = int64(fleetHeap) - int64(base)
	res.StateHeapBytes = int64(m.HeapAlloc) - int64(fleetHeap)
	res.MIGNodes, res.WholeNodes, res.GPUs = migNodes, o.nodes-migNodes, f.GPUs()

	o.stream(s, res, newProgress(stderr, o.quiet, "pod decisions"))
	s, f = nil, nil
	runtime.GC()
	whole, _, err := scaleFleet(o.nodes, o.gpusPerNode, 0)
	if err != nil {
		return nil, err
	}
	if err := o.gang512(whole, res, newProgress(stderr, o.quiet, "gang512 trials")); err != nil {
		return nil, err
	}
	runtime.GC()
	if err := o.mixedGangs(whole, res, newProgress(stderr, o.quiet, "mixed gangs")); err != nil {
		return nil, err
	}
	res.judge(o.gangs)
	return res, nil
}

// scaleFleet builds the synthetic fleet of H100 nodes and turns every node
// of the racks r with r*migPct mod 100 < migPct (r = 0, 5, 10, ... at 20%)
// into an A100 node in dynamic MIG mode. It returns the number of MIG nodes.
func scaleFleet(nodes, gpusPerNode, migPct int) (*fleet.Fleet, int, error) {
	f, err := fleet.Synthetic{Nodes: nodes, GPUsPerNode: gpusPerNode}.Build()
	if err != nil {
		return nil, 0, err
	}
	mig := 0
	for i := range f.Nodes {
		// Build fills racks in node order, DefaultNodesPerRack at a time.
		if rack := i / fleet.DefaultNodesPerRack; rack*migPct%100 < migPct {
			f.Nodes[i].MIG, f.Nodes[i].GPUModel = fleet.MIGDynamic, scaleMIGModel
			mig++
		}
	}
	if err := f.Validate(); err != nil {
		return nil, 0, fmt.Errorf("mixed fleet: %w", err)
	}
	return f, mig, nil
}

// tracker keeps the running jobs of one phase and their occupancy in GPU
// eighths, and releases them at random or oldest first.
type tracker struct {
	s     *gang.State
	live  []liveJob
	used  int
	total int
	seq   int
}

type liveJob struct {
	name  string
	units int
}

func newTracker(s *gang.State, gpus int) *tracker {
	return &tracker{s: s, total: gpus * migUnitsPerGPU}
}

func (t *tracker) occupancy() float64 { return float64(t.used) / float64(t.total) }

// name returns a fresh job name with the given prefix.
func (t *tracker) name(prefix string) string {
	t.seq++
	return prefix + strconv.Itoa(t.seq)
}

// place places j and returns the time Place took and whether it placed.
func (t *tracker) place(j *job.Job, units int) (time.Duration, bool) {
	start := time.Now()
	_, unfit := t.s.Place(j)
	d := time.Since(start)
	if unfit != nil {
		return d, false
	}
	t.live = append(t.live, liveJob{j.Name, units})
	t.used += units
	return d, true
}

// releaseAt releases the i-th running job (swapping the last into its
// place) and returns the time Release took.
func (t *tracker) releaseAt(i int) (time.Duration, error) {
	lj := t.live[i]
	start := time.Now()
	err := t.s.Release(lj.name)
	d := time.Since(start)
	if err != nil {
		return d, err
	}
	t.live[i] = t.live[len(t.live)-1]
	t.live = t.live[:len(t.live)-1]
	t.used -= lj.units
	return d, nil
}

// releaseOldest releases the longest-running job, keeping arrival order.
func (t *tracker) releaseOldest() error {
	lj := t.live[0]
	if err := t.s.Release(lj.name); err != nil {
		return err
	}
	t.live = t.live[1:]
	t.used -= lj.units
	return nil
}

// releaseDownTo releases random jobs until occupancy is at most frac.
func (t *tracker) releaseDownTo(rng *rand.Rand, frac float64) error {
	for len(t.live) > 0 && t.occupancy() > frac {
		if _, err := t.releaseAt(rng.IntN(len(t.live))); err != nil {
			return err
		}
	}
	return nil
}

// wholeGPUs is a task of g whole GPUs with half their node share of CPU
// and memory.
func wholeGPUs(g, gpusPerNode int) job.Demand {
	return job.Demand{GPUs: g,
		CPUMilli:  int64(g) * fleet.DefaultCPUMilli / int64(gpusPerNode) / 2,
		MemoryMiB: int64(g) * fleet.DefaultMemoryMiB / int64(gpusPerNode) / 2}
}

func oneTask(name string, d job.Demand) *job.Job {
	return &job.Job{Name: name, Groups: []job.Group{{Name: "task", Count: 1, Task: d}}}
}

// fillUntil places random 1..gpusPerNode-GPU jobs until occupancy reaches
// frac or one does not fit.
func (t *tracker) fillUntil(rng *rand.Rand, frac float64, gpusPerNode int) int {
	n := 0
	for t.occupancy() < frac {
		g := 1 + rng.IntN(gpusPerNode)
		if _, ok := t.place(oneTask(t.name("f"), wholeGPUs(g, gpusPerNode)), g*migUnitsPerGPU); !ok {
			break
		}
		n++
	}
	return n
}

// podShape is one kind of pod in the decision stream.
type podShape struct {
	pct    int // share of the stream
	demand job.Demand
	units  int // GPU eighths
}

// podShapes is the stream's mix; a fleet without whole-GPU or without MIG
// nodes gets only the pods it can host.
func podShapes(gpusPerNode, wholeNodes, migNodes int, pinWhole bool) []podShape {
	cpu := int64(fleet.DefaultCPUMilli / gpusPerNode) // one GPU's share of the node
	mem := int64(fleet.DefaultMemoryMiB / gpusPerNode)
	one := job.Demand{GPUs: 1, CPUMilli: cpu / 2, MemoryMiB: mem / 2}
	if pinWhole {
		one.Models = []string{fleet.DefaultGPUModel}
	}
	whole := []podShape{{50, one, migUnitsPerGPU}}
	mig := []podShape{
		{25, job.Demand{MIG: "1g.10gb", CPUMilli: cpu / 8, MemoryMiB: mem / 8}, 1},
		{15, job.Demand{MIG: "2g.20gb", CPUMilli: cpu / 4, MemoryMiB: mem / 4}, 2},
		{10, job.Demand{MIG: "3g.40gb", CPUMilli: cpu / 2, MemoryMiB: mem / 2}, 4},
	}
	switch {
	case migNodes == 0:
		return whole
	case wholeNodes == 0:
		return mig
	}
	return append(whole, mig...)
}

func pickShape(rng *rand.Rand, shapes []podShape) podShape {
	total := 0
	for _, sh := range shapes {
		total += sh.pct
	}
	r := rng.IntN(total)
	for _, sh := range shapes {
		if r < sh.pct {
			return sh
		}
		r -= sh.pct
	}
	return shapes[len(shapes)-1]
}

// streamTarget is the occupancy the stream aims at before decision i of n:
// two triangles from 50% up to 80% and back.
func streamTarget(i, n int) float64 {
	phase := 2 * float64(i) / float64(n)
	frac := phase - math.Floor(phase)
	return 0.5 + 0.3*(1-math.Abs(2*frac-1))
}

// stream runs the pod decision stream on s.
func (o *scaleOptions) stream(s *gang.State, res *scaleJSON, bar *progress) {
	rng := rand.New(rand.NewPCG(o.seed, 1))
	t := newTracker(s, res.GPUs)
	shapes := podShapes(o.gpusPerNode, res.WholeNodes, res.MIGNodes, o.pinWhole)
	for misses := 0; t.occupancy() < 0.5 && misses < 100; { // warm-up, untimed
		sh := pickShape(rng, shapes)
		if _, ok := t.place(oneTask(t.name("p"), sh.demand), sh.units); ok {
			res.WarmupPlaced++
		} else {
			misses++
		}
	}
	lat := make([]time.Duration, o.decisions)
	var rel []time.Duration
	var placeTotal time.Duration
	occMin, occMax, occSum := math.Inf(1), 0.0, 0.0
	start := time.Now()
	for i := range lat {
		for target := streamTarget(i, o.decisions); t.occupancy() > target && len(t.live) > 0; {
			d, _ := t.releaseAt(rng.IntN(len(t.live))) // names come from live: no error
			rel = append(rel, d)
		}
		sh := pickShape(rng, shapes)
		j := oneTask(t.name("p"), sh.demand)
		d, ok := t.place(j, sh.units)
		lat[i] = d
		placeTotal += d
		if d > time.Millisecond {
			res.DecisionsOver1ms++
		}
		if ok {
			res.DecisionsPlaced++
		} else {
			res.DecisionsUnfit++
			if sh.demand.MIG != "" {
				res.DecisionsUnfitMIG++
			}
		}
		occ := t.occupancy()
		occMin, occMax, occSum = min(occMin, occ), max(occMax, occ), occSum+occ
		bar.update(i+1, len(lat))
	}
	wall := time.Since(start)
	bar.finish()
	res.Decisions = len(lat)
	res.Releases = len(rel)
	res.StreamSeconds = wall.Seconds()
	res.DecisionsPerSec = float64(len(lat)) / wall.Seconds()
	res.DecisionsPerSecPlaceOnly = float64(len(lat)) / placeTotal.Seconds()
	q := quantiles(lat)
	res.P50DecisionMs, res.P90DecisionMs, res.P99DecisionMs = q.at(0.50), q.at(0.90), q.at(0.99)
	res.P999DecisionMs, res.MaxDecisionMs = q.at(0.999), q.at(1)
	res.P99ReleaseMs = quantiles(rel).at(0.99)
	res.OccupancyMinPct, res.OccupancyMaxPct = 100*occMin, 100*occMax
	res.OccupancyMeanPct = 100 * occSum / float64(len(lat))
}

// gang512 times 512-GPU gangs with a required block constraint on a fresh
// state whose free GPUs are scattered.
func (o *scaleOptions) gang512(f *fleet.Fleet, res *scaleJSON, bar *progress) error {
	s, err := gang.New(f)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(o.seed, 2))
	t := newTracker(s, res.GPUs)
	g := o.gpusPerNode
	res.Gang512FillJobs = t.fillUntil(rng, 1, g)
	res.Gang512FillPeakPct = 100 * t.occupancy()
	if err := t.releaseDownTo(rng, 0.7); err != nil {
		return err
	}
	res.Gang512OccupancyPct = 100 * t.occupancy()
	half := max(g/2, 1)
	for n := range f.Nodes {
		switch free := s.FreeGPUs(n); {
		case free == g:
			res.Gang512FreeNodes++
		case free >= half:
			res.Gang512HalfFreeNodes++
		}
	}
	type shape struct{ tasks, gpus int }
	shapes := []shape{{ceilDiv(scaleGangGPUs, g), g}, {ceilDiv(scaleGangGPUs, half), half}}
	lat := make([]time.Duration, o.gangTrials)
	byShape := make([][]time.Duration, len(shapes))
	res.Gang512Shapes = make([]gangShapeRes, len(shapes))
	for i, sh := range shapes {
		res.Gang512Shapes[i] = gangShapeRes{Tasks: sh.tasks, GPUsPerTask: sh.gpus}
	}
	for i := range lat {
		k := i % len(shapes)
		sh, out := shapes[k], &res.Gang512Shapes[k]
		j := &job.Job{Name: "gang512",
			Groups:   []job.Group{{Name: "worker", Count: sh.tasks, Task: wholeGPUs(sh.gpus, g)}},
			Topology: []job.Constraint{{Level: "block", Required: true}}}
		start := time.Now()
		_, unfit := s.Place(j)
		lat[i] = time.Since(start)
		byShape[k] = append(byShape[k], lat[i])
		out.Trials++
		if unfit == nil {
			out.Placed++
			res.Gang512Placed++
			if err := s.Release(j.Name); err != nil {
				return err
			}
		} else {
			out.Unfit++
			res.Gang512Unfit++
		}
		// Churn, untimed: release 16 random fill jobs and fill back to 70%.
		for c := 0; c < 16 && len(t.live) > 0; c++ {
			if _, err := t.releaseAt(rng.IntN(len(t.live))); err != nil {
				return err
			}
		}
		t.fillUntil(rng, 0.7, g)
		bar.update(i+1, len(lat))
	}
	bar.finish()
	res.Gang512Trials = len(lat)
	q := quantiles(lat)
	res.Gang512P50Ms, res.Gang512P99Ms, res.Gang512MaxMs = q.at(0.5), q.at(0.99), q.at(1)
	for k := range shapes {
		qs := quantiles(byShape[k])
		res.Gang512Shapes[k].P50Ms, res.Gang512Shapes[k].P99Ms = qs.at(0.5), qs.at(0.99)
	}
	return nil
}

// mixedGangs places o.gangs gangs of whole-node tasks, oldest released
// first to keep room.
func (o *scaleOptions) mixedGangs(f *fleet.Fleet, res *scaleJSON, bar *progress) error {
	s, err := gang.New(f)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(o.seed, 3))
	bg := newTracker(s, res.GPUs)
	g := o.gpusPerNode
	bg.fillUntil(rng, 0.3, g)
	if err := bg.releaseDownTo(rng, 0.2); err != nil {
		return err
	}
	gangs := newTracker(s, res.GPUs)
	gangs.used = bg.used // one occupancy for both
	maxTasks := ceilDiv(scaleGangGPUs, g)
	lat := make([]time.Duration, o.gangs)
	var placeTotal time.Duration
	start := time.Now()
	for i := range lat {
		j := &job.Job{Name: gangs.name("g")}
		tasks := 1 + rng.IntN(maxTasks)
		switch r := rng.IntN(100); {
		case r < 40:
		case r < 80:
			j.Topology = []job.Constraint{{Level: "block", Required: true}}
		default:
			tasks = 1 + rng.IntN(min(maxTasks, fleet.DefaultNodesPerRack))
			j.Topology = []job.Constraint{{Level: "rack", Required: true}}
		}
		j.Groups = []job.Group{{Name: "worker", Count: tasks, Task: wholeGPUs(g, g)}}
		units := tasks * g * migUnitsPerGPU
		for len(gangs.live) > 0 && float64(gangs.used+units) > 0.8*float64(gangs.total) {
			if err := gangs.releaseOldest(); err != nil {
				return err
			}
			res.MixedGangsReleased++
		}
		d, ok := gangs.place(j, units)
		lat[i] = d
		placeTotal += d
		if ok {
			res.MixedGangsPlaced++
			res.MixedGangsGPUsPlaced += tasks * g
		} else {
			res.MixedGangsUnfit++
		}
		bar.update(i+1, len(lat))
	}
	res.MixedGangsLoopSeconds = time.Since(start).Seconds()
	bar.finish()
	res.MixedGangs = len(lat)
	res.MixedGangsSeconds = placeTotal.Seconds()
	q := quantiles(lat)
	res.MixedGangsP50Ms, res.MixedGangsP99Ms, res.MixedGangsMaxMs = q.at(0.5), q.at(0.99), q.at(1)
	return nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// judge fills in the thresholds and whether each is met.
func (r *scaleJSON) judge(gangs int) {
	r.Thresholds = scaleThresholds{
		MinDecisionsPerSec:   scaleMinDecisionsPerSec,
		MaxP99DecisionMs:     scaleMaxP99DecisionMs,
		MaxGang512P99Ms:      scaleMaxGang512P99Ms,
		MaxMixedGangsSeconds: scaleMaxMixedGangsSec * float64(gangs) / 1000,
	}
	r.Pass = scalePass{
		DecisionsPerSec: r.DecisionsPerSec >= r.Thresholds.MinDecisionsPerSec,
		P99Decision:     r.P99DecisionMs <= r.Thresholds.MaxP99DecisionMs,
		Gang512P99:      r.Gang512P99Ms <= r.Thresholds.MaxGang512P99Ms,
		MixedGangs:      r.MixedGangsSeconds <= r.Thresholds.MaxMixedGangsSeconds,
	}
	r.Pass.All = r.Pass.DecisionsPerSec && r.Pass.P99Decision && r.Pass.Gang512P99 && r.Pass.MixedGangs
}

// sorted durations, for nearest-rank quantiles in milliseconds.
type sortedDurations []time.Duration

func quantiles(d []time.Duration) sortedDurations {
	s := slices.Clone(d)
	slices.Sort(s)
	return s
}

// at is the nearest-rank q-quantile in milliseconds, 0 for no samples.
func (s sortedDurations) at(q float64) float64 {
	if len(s) == 0 {
		return 0
	}
	i := max(int(math.Ceil(q*float64(len(s))))-1, 0)
	return float64(s[min(i, len(s)-1)]) / float64(time.Millisecond)
}

func writeScaleTable(w io.Writer, r *scaleJSON) {
	fmt.Fprintf(w, "corral bench scale: %d nodes x %d GPUs = %d GPUs (pod stream: %d %s whole, %d %s dynamic MIG), seed %d\n",
		r.Nodes, r.GPUsPerNode, r.GPUs, r.WholeNodes, r.GPUModel, r.MIGNodes, r.MIGModel, r.Seed)
	fmt.Fprintf(w, "%s %s/%s, GOMAXPROCS %d, %d CPUs\n", r.GoVersion, r.GOOS, r.GOARCH, r.GOMAXPROCS, r.NumCPU)
	fmt.Fprintf(w, "build: fleet %.3f s, state %.3f s; heap %.1f MiB (fleet %.1f MiB, state %.1f MiB)\n",
		r.FleetBuildSeconds, r.StateBuildSeconds, mib(int64(r.HeapBytes)), mib(r.FleetHeapBytes), mib(r.StateHeapBytes))
	fmt.Fprintf(w, "pod stream: %d decisions (%d placed, %d not placed, %d of them MIG), %d releases, occupancy %.0f-%.0f%% (mean %.0f%%)\n",
		r.Decisions, r.DecisionsPlaced, r.DecisionsUnfit, r.DecisionsUnfitMIG, r.Releases,
		r.OccupancyMinPct, r.OccupancyMaxPct, r.OccupancyMeanPct)
	fmt.Fprintf(w, "gang512: %d trials at %.0f%% occupancy (%d nodes fully free, %d at least half free):",
		r.Gang512Trials, r.Gang512OccupancyPct, r.Gang512FreeNodes, r.Gang512HalfFreeNodes)
	for _, sh := range r.Gang512Shapes {
		fmt.Fprintf(w, " %dx%d placed %d/%d;", sh.Tasks, sh.GPUsPerTask, sh.Placed, sh.Trials)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "mixed gangs: %d gangs, %d placed (%d GPUs), %d not placed, %d released; whole loop %.3f s\n\n",
		r.MixedGangs, r.MixedGangsPlaced, r.MixedGangsGPUsPlaced, r.MixedGangsUnfit, r.MixedGangsReleased, r.MixedGangsLoopSeconds)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tmeasured\ttarget\t")
	row := func(metric, measured, target string, pass *bool) {
		verdict := ""
		if pass != nil {
			verdict = "FAIL"
			if *pass {
				verdict = "pass"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", metric, measured, target, verdict)
	}
	row("pod decisions/s (with releases)", fmt.Sprintf("%.0f", r.DecisionsPerSec), fmt.Sprintf(">= %d", scaleMinDecisionsPerSec), &r.Pass.DecisionsPerSec)
	row("pod decisions/s (Place only)", fmt.Sprintf("%.0f", r.DecisionsPerSecPlaceOnly), "", nil)
	row("pod decision p50 / p99", fmt.Sprintf("%.4f / %.4f ms", r.P50DecisionMs, r.P99DecisionMs), fmt.Sprintf("p99 <= %g ms", r.Thresholds.MaxP99DecisionMs), &r.Pass.P99Decision)
	row("pod decision p99.9 / max", fmt.Sprintf("%.3f / %.3f ms (%d over 1 ms)", r.P999DecisionMs, r.MaxDecisionMs, r.DecisionsOver1ms), "", nil)
	row("release p99", fmt.Sprintf("%.4f ms", r.P99ReleaseMs), "", nil)
	row("gang512 p50 / p99", fmt.Sprintf("%.2f / %.2f ms", r.Gang512P50Ms, r.Gang512P99Ms), fmt.Sprintf("p99 <= %g ms", r.Thresholds.MaxGang512P99Ms), &r.Pass.Gang512P99)
	row(fmt.Sprintf("%d mixed gangs, time in Place", r.MixedGangs), fmt.Sprintf("%.3f s", r.MixedGangsSeconds), fmt.Sprintf("<= %g s", r.Thresholds.MaxMixedGangsSeconds), &r.Pass.MixedGangs)
	row("mixed gang p50 / p99", fmt.Sprintf("%.2f / %.2f ms", r.MixedGangsP50Ms, r.MixedGangsP99Ms), "", nil)
	tw.Flush()
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

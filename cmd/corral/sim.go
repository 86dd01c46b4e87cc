package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/corral-sched/corral/internal/cpuprofile"
	"io"
	"os"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/cost/tco"
	"github.com/corral-sched/corral/internal/faultrec"
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/moves"
	"github.com/corral-sched/corral/internal/openb"
	"github.com/corral-sched/corral/internal/placement"
	"github.com/corral-sched/corral/internal/quantity"
	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/sim"
	"github.com/corral-sched/corral/internal/workload"
)

const simUsage = `Usage: corral sim [flags]

Replays a workload through time under several scheduling policies, side by
side on the same input, and compares how long work waits, how long it takes
to complete, and how much of the fleet's GPUs it holds and uses.

Workloads:
  generated (default)  four tenants (research, product, platform, interns)
                       submitting training gangs, fine-tuning, inference
                       services and notebooks, sized to --load of the fleet
  openb                the Alibaba openb pod trace with its creation and
                       deletion times (--openb-pods, --openb-nodes)
  kube                 a snapshot of a live Kubernetes cluster (--kubeconfig):
                       its GPU nodes, the GPU pods running and waiting; the
                       "pending at snapshot" class says how long today's
                       queue would wait under each policy
  jobs FILE            a recorded workload (CSV, header row): name,
                       submit_s, duration_s, tenant, tasks, and optionally
                       gpus, share, mig, cpu_milli, mem_mib, priority,
                       checkpoint_s, runtime_s, min_tasks, preemptible,
                       models, class, start_s, end_s; what corral acct
                       --jobs exports from a server or kube-scheduler
  sacct FILE           a Slurm site's history, the output of
                       ` + "`" + workload.SacctFormat + "`" + `
                       (needed: JobID, Submit, Start, End, AllocTRES or
                       ReqTRES, Account or User; jobs that never ran are
                       left out)
  jobs and sacct run on --fleet, else on --nodes synthetic 8-GPU nodes,
  else on the machines the file says its jobs ran on (the "# fleet:" line
  corral acct --jobs writes); with none of these the replay refuses.

Policies: corral, and models of other systems, each configured as its
documentation gives for GPU clusters and citing the pages it follows
("per"); "worst case" labels the earlier, misconfigured models, kept for
comparison:
%s
Examples:
  corral sim                                        # 256 synthetic nodes, 14 days, load 0.8
  corral sim --nodes 512 --days 28 --load 0.9 --json out.json
  corral sim --load 0.95 --explain job-001007         # why one job waited, under each policy
  corral sim --spot-share 0.25 --mtbf 2000h           # spot nodes and node failures
  corral sim --workload sacct history.txt --nodes 32  # a Slurm site's own history, every policy
  corral sim --moves --nodes 32 --days 7             # what MIG, time-slicing, split pools, spot and a floor each save
  corral sim --workload jobs month.csv --policies corral --budget research=20000/168h
                                                    # what a weekly budget would have held back
  corral sim --workload openb --openb-pods openb_pod_list_default.csv \
             --openb-nodes openb_node_list_gpu_node.csv --openb-node-share 0.1

The openb trace replayed on all its nodes never queues: every pod of it fits
at once (it is the snapshot of a running cluster). --openb-node-share and
--openb-speedup make the same pods compete for fewer GPUs or arrive faster.

Flags:
`

type simOptions struct {
	fleetPath, workloadKind, podsPath, nodesPath, policies, jsonPath string
	demandDir, workloadPath                                          string
	nodes, seedN                                                     int
	days, load, speedup, nodeShare                                   float64
	records                                                          bool
	explain                                                          string
	spotShare, spotRate                                              float64
	spotNotice, mtbf, mttr                                           time.Duration
	preemptGrace                                                     time.Duration
	reclaimPatience                                                  time.Duration
	maxPreemptPerHour                                                int
	autoscale                                                        string
	provisionDelay, scaleDownAfter                                   time.Duration
	defrag                                                           bool
	defragMoves                                                      int
	backfill                                                         string
	reservations                                                     int
	pricesPath, reservedTerm, htmlPath                               string
	floorTerms                                                       string
	gpuModel, offer, provider                                        string
	nodesSet                                                         bool
	tco, priorityPreempt                                             bool
	kubeconfig                                                       string
	snapshotRuntime                                                  time.Duration
	platformsPath                                                    string
	moves                                                            bool
	now                                                              string
	spotOutage                                                       time.Duration
	budgets                                                          budgetFlag
	quotas                                                           quotaFlag
	imagePull                                                        string
	cpuProfile                                                       string
	pullRate                                                         float64 // bytes a second, from imagePull
}

func runSim(args []string, stdout, stderr io.Writer) error {
	o, err := parseSimFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.moves {
		return runMoves(o, stdout, stderr)
	}
	var policies []sim.Policy
	for _, name := range strings.Split(o.policies, ",") {
		p, err := sim.NewPolicy(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		policies = append(policies, p)
	}
	f, w, label, err := simInput(o)
	if err != nil {
		return err
	}
	now, err := dayFlag("--now", o.now)
	if err != nil {
		return err
	}
	cat, err := planCatalogOn(o.pricesPath, now)
	if err != nil {
		return err
	}
	if o.spotRate, err = spotRate(o, f, cat); err != nil {
		return err
	}
	if err := priceNodesForBudgets(o, f, cat); err != nil {
		return err
	}
	if label, err = addFaults(o, f, &w, label); err != nil {
		return err
	}
	scaling, err := autoscaleOptions(o, f)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d jobs on %d nodes, %d GPUs, horizon %.0f h\n\n", label, len(w.Arrivals), len(f.Nodes), f.GPUs(), w.Horizon.Hours())
	results, err := replayPolicies(o, f, w, policies, scaling, stderr)
	if errors.Is(err, sim.ErrBadQuota) {
		return &usageError{err: err} // a --quota the workload or fleet cannot take
	}
	if err != nil {
		return err
	}
	out := &simOutputs{label: label, results: results, capacity: float64(f.GPUs()), term: price.Capacity("reserved-" + o.reservedTerm)}
	if out.costs, err = costResults(results, cat, o.reservedTerm, now); err != nil {
		return err
	}
	if o.tco {
		if out.platforms, out.tcoLeftOut, err = simTCO(o.platformsPath, results, out.costs); err != nil {
			return err
		}
		if len(scaling) == 0 {
			out.tcoNote = noAutoscaleNote
		}
	}
	writeSimText(stdout, o, f, out, len(scaling) > 0)
	return writeSimFiles(stdout, o, out, cat)
}

// simOutputs is what one corral sim run reports, in every format.
type simOutputs struct {
	label      string
	results    []*sim.Result
	costs      map[string]*simCost
	platforms  []tco.Row      // with --tco
	tcoNote    string         // a warning the platform comparison needs, if any
	tcoLeftOut []string       // platforms whose policy the replay did not run
	capacity   float64        // GPUs of the whole fleet
	term       price.Capacity // the commitment reserved nodes and the floor stand for
}

// replayPolicies replays the workload under each policy in turn.
func replayPolicies(o simOptions, f *fleet.Fleet, w workload.Workload, policies []sim.Policy, scaling []sim.Autoscale, stderr io.Writer) (results []*sim.Result, err error) {
	if o.cpuProfile != "" {
		stop, err := cpuprofile.Start(o.cpuProfile)
		if err != nil {
			return nil, err
		}
		defer func() {
			if serr := stop(); err == nil {
				err = serr
			}
		}()
	}
	pull := imagePull(o, &w)
	for _, p := range policies {
		start := time.Now()
		bar := newProgress(stderr, false, p.Name())
		r, err := sim.RunWith(f, w, p, sim.Options{Explain: o.explain, PreemptGrace: o.preemptGrace, MaxPreemptionsPerHour: o.maxPreemptPerHour,
			ReclaimPatience:    patienceSetting(o.reclaimPatience),
			PriorityPreemption: o.priorityPreempt, Progress: bar.update,
			Autoscale: scaling, Defrag: sim.Defrag{Enabled: o.defrag, MaxMovesPerHour: o.defragMoves},
			Backfill: o.backfill, Reservations: o.reservations, Budgets: o.budgets, Quotas: o.quotas, ImagePull: pull})
		bar.finish()
		if err != nil {
			return nil, err
		}
		if isTerminal(stderr) {
			fmt.Fprintf(stderr, "  %s simulated in %.1f s\n", p.Name(), time.Since(start).Seconds())
		}
		results = append(results, r)
	}
	return results, nil
}

// writeSimText prints the tables and stories the flags ask for.
func writeSimText(stdout io.Writer, o simOptions, f *fleet.Fleet, out *simOutputs, autoscaled bool) {
	writeSimTable(stdout, out.results)
	writeRefused(stdout, out.results)
	writeSimCosts(stdout, out.results, out.costs)
	if o.tco {
		writeTCO(stdout, out.platforms, out.tcoLeftOut, autoscaled)
	}
	if autoscaled {
		writeAutoscaling(stdout, f, out.results)
	}
	if o.defrag {
		writeDefrag(stdout, out.results)
	}
	if o.imagePull != "" {
		writeImagePulls(stdout, o.imagePull, out.results)
	}
	writeBudgets(stdout, out.results)
	writeStories(stdout, o.explain, out.results)
}

// writeSimFiles writes the demand CSVs, the HTML report and the JSON the
// flags ask for.
func writeSimFiles(stdout io.Writer, o simOptions, out *simOutputs, cat *price.Catalog) error {
	if o.demandDir != "" {
		if err := writeDemandCSVs(o.demandDir, out.results); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nhourly card demand per policy written to %s/<policy>.csv (input of corral plan --demand)\n", o.demandDir)
	}
	if o.htmlPath != "" {
		if err := writeSimHTML(o.htmlPath, out, cat); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nreport written to %s\n", o.htmlPath)
	}
	if o.jsonPath == "" {
		return nil
	}
	if !o.records {
		for _, r := range out.results {
			r.Jobs, r.Hours = nil, nil
		}
	}
	return writeSimJSON(o.jsonPath, out)
}

func parseSimFlags(args []string, stderr io.Writer) (simOptions, error) {
	o := simOptions{budgets: budgetFlag{}, quotas: quotaFlag{}}
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.fleetPath, "fleet", "", "fleet file (YAML); default a synthetic fleet of --nodes nodes")
	fs.IntVar(&o.nodes, "nodes", 256, "nodes of 8 H100 GPUs (dynamic MIG) in the synthetic fleet")
	fs.StringVar(&o.workloadKind, "workload", "generated", "generated, openb, kube (a snapshot of a live cluster: --kubeconfig), jobs FILE (a jobs file) or sacct FILE (Slurm's sacct -P output)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kube workload: the cluster to snapshot (empty: in-cluster)")
	fs.DurationVar(&o.snapshotRuntime, "snapshot-runtime", 24*time.Hour, "kube workload: run time of a pod without a corral.sh/runtime annotation")
	fs.Float64Var(&o.days, "days", 14, "generated workload: days of arrivals")
	fs.Float64Var(&o.load, "load", 0.8, "generated workload: offered GPU load as a share of the fleet")
	fs.Float64Var(&o.speedup, "openb-speedup", 1, "openb workload: arrivals this many times faster (durations kept)")
	fs.Float64Var(&o.nodeShare, "openb-node-share", 1, "openb workload: keep this share of the trace's nodes, evenly spaced")
	fs.IntVar(&o.seedN, "seed", 1, "generated workload: seed")
	fs.StringVar(&o.podsPath, "openb-pods", "", "openb workload: pod list CSV with creation and deletion times")
	fs.StringVar(&o.nodesPath, "openb-nodes", "", "openb workload: node list CSV")
	fs.StringVar(&o.policies, "policies", strings.Join(sim.PolicyNames(), ","), "comma-separated policies")
	fs.StringVar(&o.jsonPath, "json", "", "write every policy's summary as JSON to this file")
	fs.Float64Var(&o.spotShare, "spot-share", 0, "share of the nodes that are spot (tainted \"spot\"; only preemptible, checkpointing work runs there)")
	fs.Float64Var(&o.spotRate, "spot-rate", -1, "with --spot-share: interruptions per spot node-hour (default: the high end of the catalog's published interruption band for the spot nodes' GPU offer, -ln(1-share)/730)")
	fs.DurationVar(&o.spotNotice, "spot-notice", 2*time.Minute, "with --spot-share: warning before a spot node goes")
	fs.DurationVar(&o.mtbf, "mtbf", 0, "mean time between failures of a node (0: none), e.g. 2000h")
	fs.DurationVar(&o.mttr, "mttr", 4*time.Hour, "with --mtbf: mean time to repair a node")
	fs.DurationVar(&o.reclaimPatience, "reclaim-patience", sched.DefaultReclaimPatience, reclaimPatienceHelp)
	fs.DurationVar(&o.preemptGrace, "preempt-grace", 2*time.Minute, "notice a job stopped to give quota back gets: it checkpoints in it, and its preemptor starts after it")
	fs.BoolVar(&o.priorityPreempt, "priority-preemption", false, "corral: a job whose quota has room may stop preemptible jobs of lower priority when only placement keeps it waiting")
	fs.IntVar(&o.maxPreemptPerHour, "max-preemptions-per-hour", 0, "bound on stops to give quota back in any hour (0: unbounded)")
	fs.StringVar(&o.autoscale, "autoscale", "", "MIN:MAX nodes per pool (MAX empty: all of the pool's nodes); nodes join when waiting work needs them and leave when idle, e.g. 0: for scale to zero")
	fs.DurationVar(&o.provisionDelay, "provision-delay", 5*time.Minute, "with --autoscale: time for a new node to join")
	fs.DurationVar(&o.scaleDownAfter, "scale-down-after", 30*time.Minute, "with --autoscale: idle time before an empty node leaves")
	fs.BoolVar(&o.defrag, "defrag", false, "corral moves small checkpointing jobs to consolidate free GPUs for a gang that waits only because they are scattered, when it gains more GPU-hours than they lose")
	fs.IntVar(&o.defragMoves, "defrag-moves-per-hour", 4, "with --defrag: most jobs moved in any hour")
	fs.StringVar(&o.backfill, "backfill", sim.EasyBackfill, "easy: a backfilled job may not delay the first waiting job; conservative: nor any of the first --reservations")
	fs.IntVar(&o.reservations, "reservations", 8, "with --backfill conservative: waiting jobs that hold a reservation")
	fs.StringVar(&o.pricesPath, "prices", "", "prices file (YAML) adding to or overriding the built-in catalog, for the cost of each policy")
	fs.StringVar(&o.reservedTerm, "reserved-term", "block", "the commitment reserved nodes (capacityType: reserved) stand for: block (EC2 Capacity Blocks and the like: nodes paid every hour), 1y or 3y (a discount, as Savings Plans and CUDs: also pays for on-demand cards of the model while reserved nodes take no work)")
	fs.StringVar(&o.floorTerms, "floor-terms", "1y,block", "with --moves: the commitments the floor move is priced with, one row each, each billed as the catalog's kind of it (1y and 3y: a discount on the usage; block: capacity nodes to fill)")
	fs.StringVar(&o.htmlPath, "html", "", "write a self-contained HTML report (GPUs over time, cost, waits, fragmentation) to this file")
	fs.BoolVar(&o.tco, "tco", false, "compare the monthly total cost of platforms (managed service, Kubernetes default, Kubernetes with its packing profile, Kubernetes with corral, HPC) on this workload; a platform whose policy --policies leaves out is left out")
	fs.StringVar(&o.platformsPath, "platforms", "", "with --tco: platform profiles (YAML) instead of the built-in assumptions")
	fs.StringVar(&o.explain, "explain", "", "tell the story of this job under each policy: arrival, why it waited, start, stops, end")
	fs.StringVar(&o.demandDir, "demand-dir", "", "write each policy's hourly demand for cards (hour,gpu_model,gpus: cards occupied) to DIR/<policy>.csv")
	fs.BoolVar(&o.moves, "moves", false, "price the five moves (MIG for inference, time-slicing for notebooks, split pools, spot training, the planner's committed floor): the workload (generated, or a jobs file or sacct history, whose class column says which moves apply) replayed once per move alone and once with all, each pool autoscaled, at catalog prices")
	fs.StringVar(&o.now, "now", "", "the day price ages are counted to (STALE past 90 days, EXPIRED past a price's validity), YYYY-MM-DD (default: today)")
	fs.StringVar(&o.gpuModel, "gpu-model", "", "with --moves: the GPU model the moves are priced for (default: the --fleet file's one model, else "+fleet.DefaultGPUModel+")")
	fs.StringVar(&o.offer, "offer", "", "with --moves: the catalog offer, a family or instance (g6, g6.xlarge; default: the catalog's first for the model and provider)")
	fs.StringVar(&o.provider, "provider", "", "with --moves: the provider whose offer prices the moves: aws, gcp, azure, or any in --prices (default: the catalog's first offer)")
	fs.DurationVar(&o.spotOutage, "spot-outage", 6*time.Hour, "with --moves: mean time an interrupted spot node's capacity stays missing (an assumption)")
	fs.Var(o.quotas, "quota", "TENANT=GPUS: the tenant's nominal GPU quota (repeatable); tenants not given one share what is left in proportion to their work, all in one cohort that lends what is unused")
	fs.Var(o.budgets, "budget", "corral: "+budgetFlagHelp+"; a duration counts from the replay's start, a month from 2000-01-01, the simulator's time zero")
	fs.StringVar(&o.imagePull, "image-pull", "", "RATE such as 100MB/s: every job runs a container image (its tenant's for its class: "+imageSizesHelp()+") that a node pulls at RATE before the job's tasks start there; nodes keep what they pulled, and jobs go where their images are among nodes placement rates alike")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the replays to this file (go tool pprof)")
	fs.BoolVar(&o.records, "records", false, "with --json: also every job's record (arrival, start, end, GPUs) and the fleet hour by hour")
	fs.Usage = func() { fmt.Fprintf(stderr, simUsage, policyList()); fs.PrintDefaults() }
	if err := parseFlags(fs, "", args); err != nil {
		return o, err
	}
	if (o.workloadKind == "jobs" || o.workloadKind == "sacct") && fs.NArg() > 0 && o.workloadPath == "" {
		// corral sim --workload jobs FILE [more flags]
		o.workloadPath = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return o, err
		}
	}
	if fs.NArg() > 0 {
		return o, unexpected(fs)
	}
	fs.Visit(func(f *flag.Flag) { o.nodesSet = o.nodesSet || f.Name == "nodes" })
	if !o.moves && (o.gpuModel != "" || o.offer != "" || o.provider != "") {
		return o, usageErrorf("--gpu-model, --offer and --provider choose the offer --moves is priced on; without --moves the fleet's nodes say it")
	}
	if o.reclaimPatience < 0 {
		return o, fmt.Errorf("--reclaim-patience %v: want 0 (at once) or more", o.reclaimPatience)
	}
	if o.imagePull != "" {
		var err error
		if o.pullRate, err = quantity.ByteRate(o.imagePull); err != nil {
			return o, usageErrorf("--image-pull %w", err)
		}
	}
	if o.preemptGrace < 0 || o.maxPreemptPerHour < 0 || o.defragMoves < 1 {
		if o.defragMoves < 1 {
			return o, fmt.Errorf("--defrag-moves-per-hour %d: want at least 1", o.defragMoves)
		}
		return o, fmt.Errorf("--preempt-grace %v, --max-preemptions-per-hour %d: want neither negative", o.preemptGrace, o.maxPreemptPerHour)
	}
	if o.reservedTerm != "block" && o.reservedTerm != "1y" && o.reservedTerm != "3y" {
		return o, fmt.Errorf("--reserved-term %q: want block, 1y or 3y", o.reservedTerm)
	}
	if o.moves && o.reservedTerm != "block" {
		return o, usageErrorf("--reserved-term %q: --moves prices its floor with --floor-terms (e.g. --floor-terms %s)", o.reservedTerm, o.reservedTerm)
	}
	if (o.backfill != sim.EasyBackfill && o.backfill != sim.ConservativeBackfill) || o.reservations < 1 {
		return o, fmt.Errorf("--backfill %q, --reservations %d: want easy or conservative, and at least 1 reservation", o.backfill, o.reservations)
	}
	if o.spotShare < 0 || o.spotShare > 1 || (o.spotRate < 0 && o.spotRate != -1) || o.mtbf < 0 || o.mttr <= 0 {
		return o, fmt.Errorf("--spot-share %g, --spot-rate %g, --mtbf %v, --mttr %v: want 0 <= share <= 1, rate >= 0, mtbf >= 0, mttr > 0",
			o.spotShare, o.spotRate, o.mtbf, o.mttr)
	}
	if o.nodes < 1 || o.days <= 0 || o.load <= 0 || o.load > 2 || o.speedup <= 0 || o.nodeShare <= 0 || o.nodeShare > 1 {
		return o, fmt.Errorf("--nodes %d, --days %g, --load %g, --openb-speedup %g, --openb-node-share %g: want nodes >= 1, days > 0, 0 < load <= 2, speedup > 0, 0 < share <= 1",
			o.nodes, o.days, o.load, o.speedup, o.nodeShare)
	}
	return o, nil
}

// policyList describes every policy, with the documentation each model
// of another system follows.
func policyList() string {
	var b strings.Builder
	for _, name := range sim.PolicyNames() {
		p, _ := sim.NewPolicy(name)
		fmt.Fprintf(&b, "  %-15s %s\n", name, p.Describe())
		for _, doc := range sim.Docs(p) {
			fmt.Fprintf(&b, "  %-15s   per %s\n", "", doc)
		}
	}
	return b.String()
}

// simInput builds the fleet and the workload the flags ask for.
func simInput(o simOptions) (*fleet.Fleet, workload.Workload, string, error) {
	switch o.workloadKind {
	case "generated":
		return generatedInput(o)
	case "openb":
		return openbInput(o)
	case "kube":
		return kubeInput(o)
	case "jobs", "sacct":
		return recordedInput(o)
	}
	return nil, workload.Workload{}, "", fmt.Errorf("unknown --workload %q (want generated, openb, kube, jobs or sacct)", o.workloadKind)
}

func generatedInput(o simOptions) (*fleet.Fleet, workload.Workload, string, error) {
	var f *fleet.Fleet
	var err error
	if o.fleetPath != "" {
		f, err = fleet.Load(o.fleetPath)
	} else {
		f, err = fleet.Synthetic{Nodes: o.nodes, MIG: fleet.MIGDynamic}.Build()
	}
	if err != nil {
		return nil, workload.Workload{}, "", err
	}
	horizon := time.Duration(o.days * 24 * float64(time.Hour))
	spec, err := workload.DefaultFourTenants(horizon).ForLoad(f.GPUs(), o.load)
	if err != nil {
		return nil, workload.Workload{}, "", err
	}
	spec.Sharing = workload.SharingMIG
	w, err := workload.Generate(spec, uint64(o.seedN))
	label := fmt.Sprintf("generated four-tenant workload, load %.2f, seed %d", o.load, o.seedN)
	return f, w, label, err
}

func openbInput(o simOptions) (*fleet.Fleet, workload.Workload, string, error) {
	if o.podsPath == "" || o.nodesPath == "" {
		return nil, workload.Workload{}, "", errors.New("--workload openb needs --openb-pods and --openb-nodes")
	}
	nodes, err := openb.ReadNodesFile(o.nodesPath)
	if err != nil {
		return nil, workload.Workload{}, "", err
	}
	file, err := os.Open(o.podsPath)
	if err != nil {
		return nil, workload.Workload{}, "", fmt.Errorf("open pods: %w", err)
	}
	defer file.Close()
	pods, err := workload.ReadOpenbTimed(file, o.podsPath)
	if err != nil {
		return nil, workload.Workload{}, "", err
	}
	w, skipped, err := workload.FromOpenb(pods, workload.OpenbOptions{})
	if err != nil {
		return nil, workload.Workload{}, "", err
	}
	f := openbFleet(nodes, o.nodeShare)
	if o.speedup != 1 {
		w = w.Compressed(o.speedup)
	}
	label := fmt.Sprintf("openb %s (%s), arrivals %gx faster, %g of the nodes", openb.TraceName(o.podsPath), skipped, o.speedup, o.nodeShare)
	return f, w, label, nil
}

// openbFleet turns a share of the openb nodes, evenly spaced, into a fleet
// without topology whose GPUs may be shared (the trace's fractional pods).
func openbFleet(nodes []placement.Node, share float64) *fleet.Fleet {
	f := &fleet.Fleet{}
	for i, n := range nodes {
		if !evenlyPicked(i, share) {
			continue
		}
		f.Nodes = append(f.Nodes, fleet.FromTrace(n))
	}
	return f
}

func writeSimTable(w io.Writer, results []*sim.Result) {
	fmt.Fprintf(w, "%-15s %7s %7s %9s %9s %9s %9s %9s %6s %6s %10s %8s %5s %6s %9s\n", "policy", "jobs", "waiting",
		"wait mean", "wait p50", "wait p99", "JCT mean", "JCT p99", "util", "alloc", "idle GPU-h", "deadlock", "Jain",
		"stops", "lost GPU-h")
	for _, r := range results {
		s := r.Summary
		fmt.Fprintf(w, "%-15s %7d %7d %8.2fh %8.2fh %8.2fh %8.2fh %8.2fh %5.1f%% %5.1f%% %10.0f %8d %5.2f %6d %9.0f\n", r.Policy, s.Jobs,
			s.NeverStarted, s.MeanWaitH, s.P50WaitH, s.P99WaitH, s.MeanJCTH, s.P99JCTH, 100*s.Utilisation,
			100*s.Allocation, max(s.IdleHeldGPUH, 0), s.PartialAtEnd, s.Jain, s.Interruptions, s.LostGPUHours)
	}
	writeEstimates(w, results)
	writeTenantWaits(w, results)
	for _, r := range results {
		if line := faultrec.Summary(r.Faults); line != "" {
			fmt.Fprintf(w, "\nfaults under %s: %s\n", r.Policy, line)
		}
	}
	fmt.Fprintln(w, "\nwaiting: jobs never started; waits of those count until the last event. util: GPU-hours")
	fmt.Fprintln(w, "the running jobs asked for; alloc: GPU-hours held; both over the arrival horizon.")
	fmt.Fprintln(w, "idle GPU-h: held but unused (whole nodes, pods waiting for siblings); deadlock: jobs left")
	fmt.Fprintln(w, "holding part of their GPUs at the end. Jain: fairness of GPU-hours received against each")
	fmt.Fprintln(w, "tenant's share of the work (1 is fair). stops: jobs interrupted by spot notices, node")
	fmt.Fprintln(w, "failures and preemptions; lost GPU-h: their work since the last checkpoint. Jobs refused at")
	fmt.Fprintln(w, "arrival (over quota forever) count in none of these.")
}

// writeTenantWaits prints each tenant's and each class's mean wait under
// each policy.
func writeTenantWaits(w io.Writer, results []*sim.Result) {
	if len(results) == 0 {
		return
	}
	var tenants, classes []string
	for _, t := range results[0].Summary.Tenants {
		tenants = append(tenants, t.Tenant)
	}
	for _, c := range results[0].Summary.Classes {
		classes = append(classes, c.Class)
	}
	writeQuotas(w, results[0].Summary.Tenants)
	waitTable(w, "mean wait", tenants, results, func(s sim.Summary, i int) float64 { return s.Tenants[i].MeanWaitH })
	waitTable(w, "by class", classes, results, func(s sim.Summary, i int) float64 { return s.Classes[i].MeanWaitH })
}

// writeQuotas prints the quota the replay gives each tenant, in the
// columns of the tables after it.
func writeQuotas(w io.Writer, tenants []sim.TenantSummary) {
	if len(tenants) < 2 {
		return
	}
	fmt.Fprintf(w, "\n%-15s", "tenant quota")
	for _, t := range tenants {
		fmt.Fprintf(w, " %12s", t.Tenant)
	}
	fmt.Fprintf(w, "\n%-15s", "GPUs")
	for _, t := range tenants {
		fmt.Fprintf(w, " %12.2f", t.QuotaGPUs)
	}
	fmt.Fprintln(w, "\n(each tenant's share of the workload's GPU-hours times the fleet's GPUs; one cohort lends what is unused)")
}

func waitTable(w io.Writer, title string, columns []string, results []*sim.Result, cell func(sim.Summary, int) float64) {
	if len(columns) < 2 {
		return
	}
	fmt.Fprintf(w, "\n%-15s", title)
	for _, c := range columns {
		fmt.Fprintf(w, " %12s", c)
	}
	fmt.Fprintln(w)
	for _, r := range results {
		fmt.Fprintf(w, "%-15s", r.Policy)
		for i := range columns {
			fmt.Fprintf(w, " %11.2fh", cell(r.Summary, i))
		}
		fmt.Fprintln(w)
	}
}

func writeSimJSON(path string, out *simOutputs) error {
	data, err := json.MarshalIndent(simDoc(out, out.results), "", " ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// simJSON is the document corral sim writes for machines (and embeds in
// its HTML report).
type simJSON struct {
	Input    string                   `json:"input"`
	Policies map[string]simJSONStable `json:"policies"`
	Costs    map[string]*simCost      `json:"costs"`
	TCO      []tco.Row                `json:"tco,omitempty"`
	TCONote  string                   `json:"tco_note,omitempty"`
	// TCOLeftOut are the platforms whose policy the replay did not run.
	TCOLeftOut []string        `json:"tco_left_out,omitempty"`
	Results    []simJSONResult `json:"results"`
}

// simDoc is the document of out with the given results (out's, or copies
// stripped of records).
func simDoc(out *simOutputs, results []*sim.Result) simJSON {
	doc := simJSON{Input: out.label, Policies: map[string]simJSONStable{}, Costs: out.costs, TCO: out.platforms, TCONote: out.tcoNote, TCOLeftOut: out.tcoLeftOut}
	for _, r := range results {
		st := stableFields(r.Summary)
		doc.Policies[r.Policy] = st
		doc.Results = append(doc.Results, simJSONResult{simJSONStable: st, Result: r})
	}
	return doc
}

// simJSONStable is the part of a policy's result that outside tools read;
// its names and units do not change.
type simJSONStable struct {
	MeanWaitS          float64 `json:"mean_wait_s"`
	P50WaitS           float64 `json:"p50_wait_s"`
	P99WaitS           float64 `json:"p99_wait_s"`
	MeanJCTS           float64 `json:"mean_jct_s"`
	P99JCTS            float64 `json:"p99_jct_s"`
	GPUAllocationPct   float64 `json:"gpu_allocation_pct"`
	GPUUtilisationPct  float64 `json:"gpu_utilisation_pct"`
	LostGPUHours       float64 `json:"lost_gpu_hours"`
	Preemptions        int     `json:"preemptions"`
	PreemptionsPerHour float64 `json:"preemptions_per_hour"`
	DeadlockedGangs    int     `json:"deadlocked_gangs"`
	NeverStarted       int     `json:"never_started"`
	RefusedOverQuota   int     `json:"refused_over_quota"`    // refused at arrival, in no other figure
	WorkUndoneGPUH     float64 `json:"work_undone_gpu_hours"` // of jobs accepted and not finished
}

// simJSONResult is one policy's entry: the stable fields beside the full
// result (its summary in hours, and jobs and hours with --records).
type simJSONResult struct {
	simJSONStable
	*sim.Result
}

func stableFields(s sim.Summary) simJSONStable {
	return simJSONStable{MeanWaitS: s.MeanWaitH * 3600, P50WaitS: s.P50WaitH * 3600, P99WaitS: s.P99WaitH * 3600,
		MeanJCTS: s.MeanJCTH * 3600, P99JCTS: s.P99JCTH * 3600, GPUAllocationPct: 100 * s.Allocation,
		GPUUtilisationPct: 100 * s.Utilisation, LostGPUHours: s.LostGPUHours, Preemptions: s.Preemptions,
		PreemptionsPerHour: s.PreemptPerHour, DeadlockedGangs: s.PartialAtEnd, NeverStarted: s.NeverStarted,
		RefusedOverQuota: s.Refused, WorkUndoneGPUH: s.UndoneGPUH}
}

// spotRate is --spot-rate, or without it the rate at the high end of the
// catalog's published interruption band for the GPU offer of the nodes
// that --spot-share makes spot (the first such node's model).
func spotRate(o simOptions, f *fleet.Fleet, cat *price.Catalog) (float64, error) {
	if o.spotRate >= 0 || o.spotShare == 0 {
		return max(o.spotRate, 0), nil
	}
	model := ""
	for i, n := range f.Nodes {
		if evenlyPicked(i, o.spotShare) {
			model = n.GPUModel
			break
		}
	}
	if model == "" {
		return 0, nil
	}
	offer, err := cat.Find(model, "")
	if err != nil {
		return 0, fmt.Errorf("--spot-share: %w; give --spot-rate", err)
	}
	if in := offer.Interruption; in != nil && len(in.PerMonth) == 2 {
		return moves.RatePerNodeHour(in.PerMonth[1]), nil
	}
	return 0, fmt.Errorf("--spot-share: the catalog has no published interruption band for %s (%s); give --spot-rate", model, offer.Name())
}

// addFaults taints a share of the nodes as spot and adds the spot and
// node-failure processes the flags ask for to the workload.
func addFaults(o simOptions, f *fleet.Fleet, w *workload.Workload, label string) (string, error) {
	var spot, all []string
	for i := range f.Nodes {
		n := &f.Nodes[i]
		all = append(all, n.Name)
		if evenlyPicked(i, o.spotShare) {
			n.Taints = append(n.Taints, workload.SpotTaint)
			spot = append(spot, n.Name)
		}
	}
	horizon := w.Horizon
	if n := len(w.Arrivals); n > 0 {
		horizon = max(horizon, w.Arrivals[n-1].At+w.Arrivals[n-1].Duration)
	}
	notices, err := workload.SpotInterruptions(spot, o.spotRate, o.spotNotice, horizon, uint64(o.seedN))
	if err != nil {
		return "", err
	}
	var failures []workload.Fault
	if o.mtbf > 0 {
		if failures, err = workload.NodeFailures(all, o.mtbf, o.mttr, horizon, uint64(o.seedN)+1); err != nil {
			return "", err
		}
	}
	w.Faults = workload.MergeFaults(w.Faults, notices, failures)
	if len(spot) > 0 || o.mtbf > 0 {
		label += fmt.Sprintf("; %d spot nodes (%d notices), %d node failures", len(spot), len(notices), countKind(failures, workload.NodeFailure))
	}
	return label, nil
}

func countKind(faults []workload.Fault, kind string) int {
	n := 0
	for _, f := range faults {
		if f.Kind == kind {
			n++
		}
	}
	return n
}

// writeStories prints the explained job's story under each policy.
func writeStories(w io.Writer, name string, results []*sim.Result) {
	if name == "" {
		return
	}
	for _, r := range results {
		fmt.Fprintf(w, "\n%s under %s:\n", name, r.Policy)
		if len(r.Explain) == 0 {
			fmt.Fprintln(w, "  (no such job)")
		}
		for _, line := range r.Explain {
			fmt.Fprintln(w, "  "+line)
		}
	}
}

// evenlyPicked reports whether item i is among a share of items picked
// evenly spaced (share 0.25: every fourth).
func evenlyPicked(i int, share float64) bool {
	return int(float64(i+1)*share) != int(float64(i)*share)
}

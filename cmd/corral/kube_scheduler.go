package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"github.com/corral-sched/corral/internal/buildinfo"
	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/sched"
)

const kubeSchedulerUsage = `Usage: corral kube-scheduler [--kubeconfig FILE] [flags]

Runs corral as a secondary Kubernetes scheduler. It places the pods whose
spec.schedulerName is corral (see --scheduler-name) and leaves every other
pod to the default scheduler, while counting what those hold.

What a pod asks for (container requests):
  nvidia.com/gpu: N           N whole GPUs on one node
  nvidia.com/mig-1g.10gb: 1   one MIG instance of that profile
  nvidia.com/gpu.shared: N    N time-sliced shares of one GPU
  cpu, memory                 as usual
  nodeSelector nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3   only that GPU model

Gangs: pods labelled scheduling.x-k8s.io/pod-group: NAME belong to the
PodGroup NAME of their namespace (CRD in deploy/crds/). They start together
once spec.minMember pods exist and all fit, or none start. Annotate the
PodGroup corral.sh/pack: rack to keep the gang inside one rack (any level
of --topology-levels, or node, or nvlink), corral.sh/pack-preferred: block
for best effort; corral.sh/spread: rack (or spread-preferred) to put at most
corral.sh/spread-max (default 1) of its pods in any one rack. Kubernetes'
own PodGroup (scheduling.k8s.io v1beta1 or v1alpha3, a gang policy with
minCount, named in the pod's spec.schedulingGroup) works the same where the
cluster serves it (Kubernetes 1.37: --feature-gates=GenericWorkload=true
and --runtime-config=scheduling.k8s.io/v1beta1=true; off by default).

Nodes: GPUs come from the NVIDIA device plugin's resources and GPU feature
discovery's labels (nvidia.com/gpu.product, nvidia.com/gpu.count,
nvidia.com/gpu.replicas); a model not in corral's catalog is described from
the node's nvidia.com/gpu.memory label and reported with an UnknownGPUModel
event on the node. The topology comes from the labels of --topology-levels.
A pod that cannot start gets a FailedScheduling event and a
PodScheduled=False condition saying why, for example "needs 32 GPUs (4
tasks of 8); the fleet has room for 24 GPUs (3 tasks of 8) now". Its reason
is Unschedulable when more capacity would help (cluster-autoscaler reads
only that one), else WaitingForQuota, WaitingForGang,
WaitingForReservation or WaitingForPreemption. Pods with
spec.schedulingGates are left alone until their gates are removed.

Queues: pods labelled corral.sh/queue: NAME are charged to the cluster-wide
Queue NAME (CRD in deploy/crds/); a pod or pod group starts only while the
queue's spec.quota.gpus holds it. Higher-priority pods (PriorityClass) go
first and, when nothing else frees room, evict the fewest lower-priority
pods or pod groups corral placed, through the Eviction API, which honours
PodDisruptionBudgets (see --no-preemption, --preemption-grace).

Faults: a node that is NotReady, reports a GPU fault (--fault-conditions,
--fault-taints, --fault-labels), has a notice to go (--notice-taints,
--notice-labels: spot interruption and maintenance taints of the AWS node
termination handler, Karpenter, GKE) or is cordoned takes no new pods. A
gang with pods on a failed or faulty node moves them to a hot spare
(--spare-label) or free node of the same domain, or, without one or with
corral.sh/on-node-failure: requeue on its PodGroup, stops whole and queues
again at the front; pods on a node about to go get the annotation
corral.sh/interruption-notice and stop with their own grace period. The
job's corral.sh/checkpoint annotation becomes corral.sh/resume-from of what
starts again. Each fault is a NodeFault event and a line of --accounting.

Run several replicas with --leader-elect (the default): one schedules, the
others wait on a coordination.k8s.io Lease. Each serves /livez, /readyz and
/metrics on --http-address. --kube-api-qps and --kube-api-burst limit the
API requests, in cluster as with --kubeconfig. Manifests: deploy/.

Examples:
  corral kube-scheduler --kubeconfig ~/.kube/config --leader-elect=false
  corral kube-scheduler --kubeconfig ~/.kube/config --print-topology
  corral kube-scheduler --topology-levels block=example.com/block,rack=example.com/rack

Flags:
`

// kubeSchedulerFlags are the parsed flags of corral kube-scheduler.
type kubeSchedulerFlags struct {
	kubeconfig, schedulerName, levels, nvlink, nodeSelector string
	levelsSet                                               bool
	qps                                                     float64
	burst                                                   int
	httpAddr                                                string
	leaderElect                                             bool
	leaseNamespace, leaseName, identity                     string
	interval                                                time.Duration
	verbose                                                 bool
	accounting, accountingCMs, draGPUDrivers                string
	unitMemoryCM                                            string
	noPreemption                                            bool
	preemptionGrace                                         time.Duration
	reclaimPatience                                         time.Duration
	reservations                                            int
	defrag                                                  bool
	defragMoves                                             int
	faultConditions, faultTaints, faultLabels               string
	noticeTaints, noticeLabels, spareLabel                  string
	faultGrace                                              time.Duration
	deviceHealth, moveOffCordoned                           bool
	printTopology                                           bool
	output                                                  string
}

func runKubeScheduler(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return kubeSchedulerMain(ctx, args, stdout, stderr)
}

func kubeSchedulerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseKubeSchedulerFlags(args, stderr)
	if err != nil {
		return err
	}
	if f.printTopology {
		return f.writeTopology(ctx, stdout)
	}
	s, log, closeAll, err := f.scheduler(stderr)
	if err != nil {
		return err
	}
	defer closeAll()
	return f.run(ctx, s, log)
}

// run serves the probes and metrics and schedules with s, under the
// Lease when the flags say so, until ctx ends.
func (f *kubeSchedulerFlags) run(ctx context.Context, s *kube.Scheduler, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	serving, err := serveHTTP(ctx, s, f.httpAddr, log)
	if err != nil {
		return err
	}
	defer func() { cancel(); <-serving }()
	if !f.leaderElect {
		return s.Run(ctx)
	}
	el := kube.DefaultElection(f.identity)
	el.Namespace, el.Name = f.leaseNamespace, f.leaseName
	return s.RunElected(ctx, el)
}

// scheduler builds the scheduler the flags describe, its clients (rate
// limited as --kube-api-qps and --kube-api-burst say, in cluster too) and
// its logger; closeAll closes the accounting file.
func (f *kubeSchedulerFlags) scheduler(stderr io.Writer) (s *kube.Scheduler, log *slog.Logger, closeAll func(), err error) {
	rc, err := kube.RESTConfig(kube.ClientOptions{Kubeconfig: f.kubeconfig, QPS: float32(f.qps), Burst: f.burst})
	if err != nil {
		return nil, nil, nil, err
	}
	return f.schedulerOn(rc, stderr)
}

// schedulerOn is scheduler with the client configuration rc.
func (f *kubeSchedulerFlags) schedulerOn(rc *rest.Config, stderr io.Writer) (s *kube.Scheduler, log *slog.Logger, closeAll func(), err error) {
	cfg, err := f.config()
	if err != nil {
		return nil, nil, nil, err
	}
	clients, err := kube.NewClients(rc)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg.Events = clients.Events
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	closeAll = func() {}
	if f.accounting != "" {
		file, err := os.OpenFile(f.accounting, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("accounting: %w", err)
		}
		closeAll = func() { file.Close() }
		cfg.Accounting = file
	}
	cfg.AccountingConfigMaps = f.accountingCMs
	cfg.UnitMemoryConfigMap = f.unitMemoryCM
	log.Info("corral kube-scheduler starting", buildinfo.Get().LogAttrs()...)
	log.Info("corral kube-scheduler settings", "scheduler-name", cfg.SchedulerName, "host", rc.Host,
		"qps", rc.QPS, "burst", rc.Burst, "leader-elect", f.leaderElect, "http-address", f.httpAddr)
	return kube.New(clients.Client, clients.Dynamic, cfg, log), log, closeAll, nil
}

// serveHTTP serves the probes and metrics on addr until ctx ends; the
// returned channel closes when it has stopped. An empty addr serves
// nothing.
func serveHTTP(ctx context.Context, s *kube.Scheduler, addr string, log *slog.Logger) (<-chan struct{}, error) {
	done := make(chan struct{})
	if addr == "" {
		close(done)
		return done, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http-address: %w", err)
	}
	log.Info("serving health and metrics", "address", ln.Addr().String()) // the port chosen, for --http-address :0
	go func() {
		defer close(done)
		if err := s.ServeOn(ctx, ln); err != nil {
			log.Error("health and metrics endpoint", "err", err)
		}
	}()
	return done, nil
}

func parseKubeSchedulerFlags(args []string, stderr io.Writer) (*kubeSchedulerFlags, error) {
	fs := flag.NewFlagSet("kube-scheduler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host, _ := os.Hostname()
	f := &kubeSchedulerFlags{}
	fs.StringVar(&f.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file; empty: the in-cluster service account")
	fs.Float64Var(&f.qps, "kube-api-qps", kube.DefaultQPS, "requests per second to the API server, per client (in cluster too); negative: no limit")
	fs.IntVar(&f.burst, "kube-api-burst", kube.DefaultBurst, "requests allowed in a burst to the API server, per client")
	fs.StringVar(&f.httpAddr, "http-address", ":10251", "serve /livez, /readyz and /metrics on this address; empty: not at all")
	fs.StringVar(&f.schedulerName, "scheduler-name", kube.DefaultSchedulerName, "place the pods whose spec.schedulerName is this")
	fs.StringVar(&f.levels, "topology-levels", kube.FormatLevels(kube.DefaultLevels()),
		"topology levels, outermost first, as name=label pairs; name=label|label tries the labels in order (the defaults: the labels Kubernetes, EKS, GKE and NVIDIA GPU feature discovery publish)")
	fs.StringVar(&f.nvlink, "nvlink-level", "", "the level whose domains are multi-node NVLink domains (GB200 NVL72); empty: "+kube.DefaultNVLinkLevel+" with the default --topology-levels, else NVLink ends at the node")
	fs.StringVar(&f.nodeSelector, "node-selector", "", "place only on nodes matching this label selector, for example pool=gpu")
	fs.BoolVar(&f.leaderElect, "leader-elect", true, "take a Lease before scheduling, so that only one replica schedules")
	fs.StringVar(&f.leaseNamespace, "leader-elect-namespace", "kube-system", "namespace of the Lease")
	fs.StringVar(&f.leaseName, "leader-elect-name", "corral-scheduler", "name of the Lease")
	fs.StringVar(&f.identity, "id", host, "this replica's identity in the Lease")
	fs.DurationVar(&f.interval, "interval", 2*time.Second, "the longest wait between scheduling cycles; changes start one sooner")
	fs.BoolVar(&f.verbose, "v", false, "log every cycle")
	fs.StringVar(&f.accounting, "accounting", "", "append accounting records (JSON lines: pods and pod groups started, preempted, ended, with waits and GPU-seconds) to this file")
	fs.StringVar(&f.accountingCMs, "accounting-configmaps", "", "keep the accounting records in the API server too, in ConfigMaps PREFIX-NNNNNN of NAMESPACE (namespace/prefix), which outlive a replica and which a new leader continues and reads the Queues' budgets' ended use from")
	fs.StringVar(&f.unitMemoryCM, "memory-configmap", "", "keep what the scheduler remembers of units (preemption counts, reborrow back-offs, claimed room), the mix of pod shapes its packing policy learned, the last hour's --defrag moves, and the placements of gangs inferred from Jobs, JobSets and LeaderWorkerSets while they are bound in this ConfigMap (namespace/name), so that a new leader continues them; empty: in this replica only")
	fs.BoolVar(&f.noPreemption, "no-preemption", false, "never evict lower-priority pods to make room")
	fs.StringVar(&f.draGPUDrivers, "dra-gpu-drivers", strings.Join(kube.DefaultDRAGPUDrivers, ","), "DRA drivers whose devices are GPUs to the core (counted for packing and quotas); empty: none")
	fs.DurationVar(&f.reclaimPatience, "reclaim-patience", sched.DefaultReclaimPatience, reclaimPatienceHelp)
	fs.IntVar(&f.reservations, "reservations", 1, "how many waiting pods or pod groups hold a reservation (the room they wait for, which later pods take only if they end before it is due); 0: none, so every pod starts as soon as it fits, as the upstream scheduler places them, and a large gang waits until small pods leave it room")
	fs.BoolVar(&f.defrag, "defrag", false, "let the first pod or pod group that waits for room start now by evicting pods that checkpoint (annotation "+kube.AnnotationCheckpointEvery+", e.g. 30m) and have a controller to start them again elsewhere, when the GPUs it needs are free but scattered over nodes and it gains more GPU-hours than they lose")
	fs.IntVar(&f.defragMoves, "defrag-moves-per-hour", 4, "with --defrag, the most pods or pod groups moved in any hour")
	fs.DurationVar(&f.preemptionGrace, "preemption-grace", -1, "termination grace period of preempted pods; negative: each pod's own")
	fs.StringVar(&f.faultConditions, "fault-conditions", strings.Join(kube.DefaultFaultConditions, ","),
		"node condition types that mark a GPU fault when True (Type=Status for another status); empty: none")
	fs.StringVar(&f.faultTaints, "fault-taints", strings.Join(kube.DefaultFaultTaints, ","), "taint keys that mark a GPU fault; empty: none")
	fs.StringVar(&f.faultLabels, "fault-labels", strings.Join(kube.DefaultFaultLabels, ","), "node labels (key or key=value) that mark a GPU fault; empty: none")
	fs.StringVar(&f.noticeTaints, "notice-taints", strings.Join(kube.DefaultNoticeTaints, ","),
		"taint keys that mark a node about to go (spot interruption, maintenance); empty: none")
	fs.StringVar(&f.noticeLabels, "notice-labels", strings.Join(kube.DefaultNoticeLabels, ","), "node labels (key or key=value) that mark a node about to go; empty: none")
	fs.StringVar(&f.spareLabel, "spare-label", kube.DefaultSpareLabel, "node label (key or key=value) of hot spares")
	fs.BoolVar(&f.deviceHealth, "device-health", true, "stop and start again a pod whose device the kubelet reports Unhealthy in its status (allocatedResourcesStatus)")
	fs.BoolVar(&f.moveOffCordoned, "move-off-cordoned", false, "stop the pods on a cordoned node as on one about to go, and queue them again; default: a cordon only keeps new pods off")
	fs.DurationVar(&f.faultGrace, "node-fault-grace", 0, "how long a node is NotReady before the gangs on it are moved or requeued")
	fs.BoolVar(&f.printTopology, "print-topology", false, "print the topology tree the nodes' labels make (levels, the labels read, GPUs per domain) and exit")
	fs.StringVar(&f.output, "o", "text", "output `format` of --print-topology: text, json or yaml")
	alias(fs, "o", "output")
	fs.Usage = func() { fmt.Fprint(stderr, kubeSchedulerUsage); fs.PrintDefaults() }
	if err := parseFlags(fs, "", args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, unexpected(fs)
	}
	if f.output != "text" && f.output != "json" && f.output != "yaml" {
		return nil, fmt.Errorf("-o %q: want text, json or yaml", f.output)
	}
	fs.Visit(func(fl *flag.Flag) { f.levelsSet = f.levelsSet || fl.Name == "topology-levels" })
	if f.leaderElect && f.identity == "" {
		return nil, errors.New("--leader-elect needs --id (no hostname)")
	}
	return f, nil
}

func (f *kubeSchedulerFlags) config() (kube.Config, error) {
	levels, err := kube.ParseLevels(f.levels)
	if err != nil {
		return kube.Config{}, err
	}
	if levels == nil {
		levels = []kube.Level{}
	}
	nvlink := f.nvlink
	if nvlink == "" && !f.levelsSet {
		nvlink = kube.DefaultNVLinkLevel
	}
	sel, err := labels.Parse(f.nodeSelector)
	if err != nil {
		return kube.Config{}, fmt.Errorf("--node-selector: %w", err)
	}
	if f.reservations < 0 {
		return kube.Config{}, fmt.Errorf("--reservations %d: want 0 (none) or more", f.reservations)
	}
	if f.defragMoves < 1 {
		return kube.Config{}, fmt.Errorf("--defrag-moves-per-hour %d: want 1 or more (to move nothing, leave --defrag off)", f.defragMoves)
	}
	cfg := kube.Config{SchedulerName: f.schedulerName, Levels: levels, NVLinkLevel: nvlink, NodeSelector: sel,
		Interval: f.interval, NoPreemption: f.noPreemption, ReclaimPatience: patienceSetting(f.reclaimPatience),
		Reservations: reservationSetting(f.reservations), DRAGPUDrivers: append([]string{}, kube.ParseList(f.draGPUDrivers)...),
		Defrag: f.defrag, DefragMovesPerHour: f.defragMoves}
	cfg.Health = kube.HealthConfig{FaultConditions: kube.ParseList(f.faultConditions), FaultTaints: kube.ParseList(f.faultTaints),
		FaultLabels: kube.ParseList(f.faultLabels), NoticeTaints: kube.ParseList(f.noticeTaints),
		NoticeLabels: kube.ParseList(f.noticeLabels), SpareLabel: f.spareLabel, Grace: f.faultGrace, IgnoreDeviceHealth: !f.deviceHealth, MoveOffCordoned: f.moveOffCordoned}
	if f.preemptionGrace >= 0 {
		grace := int64(f.preemptionGrace / time.Second)
		cfg.PreemptionGrace = &grace
	}
	if nvlink != "" && !hasLevel(levels, nvlink) {
		return cfg, fmt.Errorf("--nvlink-level %q is not one of --topology-levels", nvlink)
	}
	return cfg, nil
}

func hasLevel(levels []kube.Level, name string) bool {
	for _, l := range levels {
		if l.Name == name {
			return true
		}
	}
	return false
}

// restConfig is the client configuration of a kubeconfig, or in cluster
// when it is empty, with corral's default rate limits.
func restConfig(kubeconfig string) (*rest.Config, error) {
	return kube.RESTConfig(kube.ClientOptions{Kubeconfig: kubeconfig})
}

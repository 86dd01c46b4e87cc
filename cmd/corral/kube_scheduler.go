package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/corral-sched/corral/internal/kube"
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
own PodGroup (scheduling.k8s.io/v1alpha3, a gang policy with minCount,
named in the pod's spec.schedulingGroup) works the same where the cluster
serves it.

Nodes: GPUs come from the NVIDIA device plugin's resources and GPU feature
discovery's labels (nvidia.com/gpu.product, nvidia.com/gpu.count,
nvidia.com/gpu.replicas); the topology from the labels of
--topology-levels. A pod that cannot start gets a FailedScheduling event and
a PodScheduled=False condition saying why, for example "needs 32 GPUs (4
tasks of 8); the fleet has room for 24 GPUs (3 tasks of 8) now".

Queues: pods labelled corral.sh/queue: NAME are charged to the cluster-wide
Queue NAME (CRD in deploy/crds/); a pod or pod group starts only while the
queue's spec.quota.gpus holds it. Higher-priority pods (PriorityClass) go
first and, when nothing else frees room, evict the fewest lower-priority
pods or pod groups corral placed, through the Eviction API, which honours
PodDisruptionBudgets (see --no-preemption, --preemption-grace).

Run several replicas with --leader-elect (the default): one schedules, the
others wait on a coordination.k8s.io Lease. Manifests: deploy/.

Examples:
  corral kube-scheduler --kubeconfig ~/.kube/config --leader-elect=false
  corral kube-scheduler --topology-levels block=example.com/block,rack=example.com/rack

Flags:
`

// kubeSchedulerFlags are the parsed flags of corral kube-scheduler.
type kubeSchedulerFlags struct {
	kubeconfig, schedulerName, levels, nvlink, nodeSelector string
	leaderElect                                             bool
	leaseNamespace, leaseName, identity                     string
	interval                                                time.Duration
	verbose                                                 bool
	accounting                                              string
	noPreemption                                            bool
	preemptionGrace                                         time.Duration
}

func runKubeScheduler(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return kubeSchedulerMain(ctx, args, stderr)
}

func kubeSchedulerMain(ctx context.Context, args []string, stderr io.Writer) error {
	f, err := parseKubeSchedulerFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	rc, err := restConfig(f.kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if f.accounting != "" {
		file, err := os.OpenFile(f.accounting, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("accounting: %w", err)
		}
		defer file.Close()
		cfg.Accounting = file
	}
	s := kube.New(client, dyn, cfg, log)
	log.Info("corral kube-scheduler starting", "scheduler-name", cfg.SchedulerName, "host", rc.Host, "leader-elect", f.leaderElect)
	if !f.leaderElect {
		return s.Run(ctx)
	}
	el := kube.DefaultElection(f.identity)
	el.Namespace, el.Name = f.leaseNamespace, f.leaseName
	return s.RunElected(ctx, el)
}

func parseKubeSchedulerFlags(args []string, stderr io.Writer) (*kubeSchedulerFlags, error) {
	fs := flag.NewFlagSet("kube-scheduler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host, _ := os.Hostname()
	f := &kubeSchedulerFlags{}
	fs.StringVar(&f.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file; empty: the in-cluster service account")
	fs.StringVar(&f.schedulerName, "scheduler-name", kube.DefaultSchedulerName, "place the pods whose spec.schedulerName is this")
	fs.StringVar(&f.levels, "topology-levels", "zone=topology.kubernetes.io/zone,block=corral.sh/block,rack=corral.sh/rack",
		"topology levels, outermost first, as name=node-label pairs")
	fs.StringVar(&f.nvlink, "nvlink-level", "", "the level whose domains are rack-scale NVLink domains (GB200 NVL72: rack); empty: NVLink ends at the node")
	fs.StringVar(&f.nodeSelector, "node-selector", "", "place only on nodes matching this label selector, for example pool=gpu")
	fs.BoolVar(&f.leaderElect, "leader-elect", true, "take a Lease before scheduling, so that only one replica schedules")
	fs.StringVar(&f.leaseNamespace, "leader-elect-namespace", "kube-system", "namespace of the Lease")
	fs.StringVar(&f.leaseName, "leader-elect-name", "corral-scheduler", "name of the Lease")
	fs.StringVar(&f.identity, "id", host, "this replica's identity in the Lease")
	fs.DurationVar(&f.interval, "interval", 2*time.Second, "the longest wait between scheduling cycles; changes start one sooner")
	fs.BoolVar(&f.verbose, "v", false, "log every cycle")
	fs.StringVar(&f.accounting, "accounting", "", "append accounting records (JSON lines: pods and pod groups started, preempted, ended, with waits and GPU-seconds) to this file")
	fs.BoolVar(&f.noPreemption, "no-preemption", false, "never evict lower-priority pods to make room")
	fs.DurationVar(&f.preemptionGrace, "preemption-grace", -1, "termination grace period of preempted pods; negative: each pod's own")
	fs.Usage = func() { fmt.Fprint(stderr, kubeSchedulerUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return nil, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
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
	sel, err := labels.Parse(f.nodeSelector)
	if err != nil {
		return kube.Config{}, fmt.Errorf("--node-selector: %w", err)
	}
	cfg := kube.Config{SchedulerName: f.schedulerName, Levels: levels, NVLinkLevel: f.nvlink, NodeSelector: sel,
		Interval: f.interval, NoPreemption: f.noPreemption}
	if f.preemptionGrace >= 0 {
		grace := int64(f.preemptionGrace / time.Second)
		cfg.PreemptionGrace = &grace
	}
	if f.nvlink != "" && !hasLevel(levels, f.nvlink) {
		return cfg, fmt.Errorf("--nvlink-level %q is not one of --topology-levels", f.nvlink)
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

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig and not in a cluster: %w", err)
		}
		return rc, nil
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	rc.QPS, rc.Burst = 200, 400
	return rc, nil
}

package peers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// Schedulers the rig replays under.
const (
	// KubePacked is the upstream kube-scheduler with NodeResourcesFit
	// scoring by MostAllocated, nvidia.com/gpu weighted above CPU and
	// memory: its documented configuration for bin-packing extended
	// resources (kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing/).
	KubePacked = "kube-packed"
	// Kueue is Kueue v0.17.0 admitting Jobs (a ClusterQueue per tenant,
	// nominal quota its share of the fleet, all in one cohort that lends
	// what is unused; BestEffortFIFO) in front of KubePacked.
	Kueue = "kueue"
	// Corral is corral kube-scheduler, in this process with a client of
	// its own; an Indexed Job's pods are one gang.
	Corral = "corral"
	// KubeGang is KubePacked with Kubernetes' own gang scheduling on: the
	// GenericWorkload and TopologyAwareWorkloadScheduling features, which
	// add the GangScheduling and topology placement plugins to the default
	// profile. Each gang is a PodGroup (scheduling.k8s.io/v1beta1) of
	// minCount its tasks whose topology constraint is the job's required
	// level.
	KubeGang = "kube-gang"
	// KueueTAS is Kueue with topology-aware scheduling in front of
	// KubePacked, as Kueue's TAS guide sets it up: a Topology of the
	// fleet's levels (block, rack, node) that the ResourceFlavor names,
	// one ClusterQueue per tenant as for Kueue, and each job's required
	// level as its podset-required-topology annotation.
	KueueTAS = "kueue-tas"
	// CorralNoReserve is Corral with no reservations (corral
	// kube-scheduler --reservations 0): each unit starts as soon as it
	// fits, as the upstream scheduler places pods.
	CorralNoReserve = "corral-noreserve"
)

// Schedulers lists the schedulers the model comparison replays under.
func Schedulers() []string { return []string{KubePacked, Kueue, Corral} }

// GangSchedulers lists every scheduler a replay may run under: those of
// Schedulers, and the configurations for large gangs.
func GangSchedulers() []string {
	return []string{KubePacked, KubeGang, Kueue, KueueTAS, Corral, CorralNoReserve}
}

// isCorral reports whether s is corral in one of its configurations.
func isCorral(s string) bool { return s == Corral || s == CorralNoReserve }

// isKueue reports whether s is Kueue in one of its configurations.
func isKueue(s string) bool { return s == Kueue || s == KueueTAS }

// kubePackedConfig is the KubeSchedulerConfiguration of KubePacked.
const kubePackedConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: %q, qps: %g, burst: %d}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: nvidia.com/gpu, weight: 10}
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
`

// workloadGates are the kube-scheduler features KubeGang turns on.
const workloadGates = "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true"

// startKubePacked runs the upstream kube-scheduler configured to pack
// GPUs, with gang scheduling when gangs is set (KubeGang).
func (r *Rig) startKubePacked(dir string, qps float64, gangs bool) error {
	config := filepath.Join(dir, "kube-scheduler.yaml")
	body := fmt.Sprintf(kubePackedConfig, r.Kubeconfig, qps, int(2*qps))
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		return fmt.Errorf("kube-scheduler config: %w", err)
	}
	args := []string{"--config=" + config, "--secure-port=0"}
	if gangs {
		args = append(args, workloadGates)
	}
	_, err := r.run(dir, "kube-scheduler", filepath.Join(r.Bin, "kube-scheduler"), args...)
	return err
}

// startCorral runs corral's Kubernetes scheduler in this process, on a
// client of its own at qps acting as the ServiceAccount of deploy/ with
// deploy/rbac.yaml's permissions only (the requests they forbid are
// counted in CorralForbidden), with reservations as kube.Config takes
// them (0: one, negative: none), until ctx ends; stop waits for it.
func (r *Rig) startCorral(ctx context.Context, qps float64, reservations int) (stop func(), err error) {
	if err := r.ApplyDeployRBAC(ctx); err != nil {
		return nil, fmt.Errorf("deploy/rbac.yaml: %w", err)
	}
	id, err := r.As(kubetest.SchedulerUser, "system:serviceaccounts", "system:serviceaccounts:corral-system")
	if err != nil {
		return nil, err
	}
	r.CorralForbidden = id.Forbidden
	cfg := *id.Config
	cfg.QPS, cfg.Burst = float32(qps), int(2*qps)
	cl, err := kube.NewClients(&cfg)
	if err != nil {
		return nil, err
	}
	s := kube.New(cl.Client, cl.Dynamic, kube.Config{NodeSelector: labels.SelectorFromSet(labels.Set{"type": "kwok"}), Interval: time.Second, Events: cl.Events,
		Reservations: reservations},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(runCtx) }()
	return func() { cancel(); <-done }, nil
}

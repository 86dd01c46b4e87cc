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
)

// Schedulers lists the schedulers a replay may run under.
func Schedulers() []string { return []string{KubePacked, Kueue, Corral} }

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

// startKubePacked runs the upstream kube-scheduler configured to pack GPUs.
func (r *Rig) startKubePacked(dir string, qps float64) error {
	config := filepath.Join(dir, "kube-scheduler.yaml")
	body := fmt.Sprintf(kubePackedConfig, r.Kubeconfig, qps, int(2*qps))
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		return fmt.Errorf("kube-scheduler config: %w", err)
	}
	_, err := r.run(dir, "kube-scheduler", filepath.Join(r.Bin, "kube-scheduler"), "--config="+config, "--secure-port=0")
	return err
}

// startCorral runs corral's Kubernetes scheduler in this process, on a
// client of its own at qps, until ctx ends; stop waits for it.
func (r *Rig) startCorral(ctx context.Context, qps float64) (stop func(), err error) {
	cfg := *r.Config
	cfg.QPS, cfg.Burst = float32(qps), int(2*qps)
	cl, err := kube.NewClients(&cfg)
	if err != nil {
		return nil, err
	}
	s := kube.New(cl.Client, cl.Dynamic, kube.Config{NodeSelector: labels.SelectorFromSet(labels.Set{"type": "kwok"}), Interval: time.Second, Events: cl.Events},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(runCtx) }()
	return func() { cancel(); <-done }, nil
}

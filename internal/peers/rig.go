package peers

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/kube/kubetest"
)

//go:embed stages.yaml
var kwokStages []byte

// Rig is a control plane whose fake nodes run pods: etcd, kube-apiserver,
// kube-controller-manager (the Job controller and the garbage collector)
// and KWOK, which starts every pod bound to one of its nodes and completes
// it after the delay its pod-complete annotation gives.
type Rig struct {
	*kubetest.Cluster
	Kubeconfig string
	Bin        string // the directory of the binaries
	// CorralForbidden counts the requests of corral's scheduler, run as
	// deployed, that the API server forbade; nil until it starts.
	CorralForbidden *atomic.Int64
	procs           []*kubetest.Process
}

// DeployedErr says how many of corral's requests deploy/rbac.yaml forbade,
// nil when none did or corral did not run.
func (r *Rig) DeployedErr() error {
	if r.CorralForbidden == nil || r.CorralForbidden.Load() == 0 {
		return nil
	}
	return fmt.Errorf("%d of corral's requests forbidden by deploy/rbac.yaml", r.CorralForbidden.Load())
}

// BinDir is where the binaries are: $CORRAL_KUBE_BIN, else
// ~/.cache/corral/bin (scripts/deps/10-kube.sh and 30-peers.sh).
func BinDir() (string, error) {
	if d := os.Getenv("CORRAL_KUBE_BIN"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("home directory: %w", err)
	}
	return filepath.Join(home, ".cache", "corral", "bin"), nil
}

// peersEtcd is the etcd the rig runs: $CORRAL_PEERS_ETCD, else
// peers-bin/etcd beside bin (scripts/deps/30-peers.sh). It must report
// watch progress (3.4.31 and later): KWOK's client asks for streamed watch
// lists, which the API server refuses over an older etcd, and does not
// fall back.
func peersEtcd(bin string) (string, error) {
	p := os.Getenv("CORRAL_PEERS_ETCD")
	if p == "" {
		p = filepath.Join(filepath.Dir(bin), "peers-bin", "etcd")
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: no %s (run scripts/deps/30-peers.sh, or set CORRAL_PEERS_ETCD)", kubetest.ErrNoBinaries, p)
	}
	return p, nil
}

// need checks that the named binaries are in dir.
func need(dir string, names ...string) error {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return fmt.Errorf("%w: no %s (run scripts/deps.sh, or set CORRAL_KUBE_BIN)", kubetest.ErrNoBinaries, filepath.Join(dir, n))
		}
	}
	return nil
}

// Start runs the rig in dir with the fleet's nodes (made before KWOK
// starts, which then owns their status).
func Start(ctx context.Context, dir string, f Fleet) (*Rig, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	if err := need(bin, "kube-controller-manager", "kwok", "kube-scheduler"); err != nil {
		return nil, err
	}
	etcd, err := peersEtcd(bin)
	if err != nil {
		return nil, err
	}
	c, err := kubetest.StartWithEtcd(ctx, dir, etcd)
	if err != nil {
		return nil, err
	}
	r := &Rig{Cluster: c, Bin: bin}
	if err := r.addNodes(ctx, f); err != nil {
		r.Stop()
		return nil, err
	}
	if err := r.start(ctx, dir); err != nil {
		r.Stop()
		return nil, err
	}
	return r, nil
}

func (r *Rig) start(ctx context.Context, dir string) error {
	var err error
	if r.Kubeconfig, err = r.WriteKubeconfig(dir); err != nil {
		return err
	}
	kcm, err := r.run(dir, "kube-controller-manager", filepath.Join(r.Bin, "kube-controller-manager"),
		"--kubeconfig="+r.Kubeconfig, "--controllers=job-controller,garbage-collector-controller",
		"--leader-elect=false", "--secure-port=0", "--kube-api-qps=500", "--kube-api-burst=1000",
		"--concurrent-job-syncs=10")
	if err != nil {
		return err
	}
	stages := filepath.Join(dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, kwokStages, 0o600); err != nil {
		return fmt.Errorf("kwok stages: %w", err)
	}
	kwok, err := r.run(dir, "kwok", filepath.Join(r.Bin, "kwok"),
		"--kubeconfig="+r.Kubeconfig, "--manage-all-nodes=true", "--config="+stages, "--server-address=")
	if err != nil {
		return err
	}
	// Both are ready when they have not exited a moment after starting:
	// neither serves a health endpoint here.
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, p := range []*kubetest.Process{kcm, kwok} {
		if p.Exited() {
			return fmt.Errorf("%s exited at start:\n%s", p.Name, p.Tail())
		}
	}
	return nil
}

// run starts a process of the rig, stopped by Stop.
func (r *Rig) run(dir, name, bin string, args ...string) (*kubetest.Process, error) {
	return r.runEnv(dir, nil, name, bin, args...)
}

// runEnv is run with env added to this process's environment.
func (r *Rig) runEnv(dir string, env []string, name, bin string, args ...string) (*kubetest.Process, error) {
	p, err := kubetest.StartProcess(dir, env, name, bin, args...)
	if err != nil {
		return nil, err
	}
	r.procs = append(r.procs, p)
	return p, nil
}

// Stop ends every process of the rig, the control plane last.
func (r *Rig) Stop() {
	for i := len(r.procs) - 1; i >= 0; i-- {
		r.procs[i].Stop()
	}
	r.procs = nil
	r.Cluster.Stop()
}

// Fleet is the fake nodes of a replay: Nodes nodes of GPUs GPUs each, of
// one product as GPU feature discovery names it.
type Fleet struct {
	Nodes, GPUs int
	Product     string // e.g. NVIDIA-H100-80GB-HBM3
	CPU, Memory string // per node; default 192 cores, 2Ti
	// RackNodes, when set, puts each run of RackNodes nodes in a rack
	// (label corral.sh/rack), and BlockRacks racks in a block
	// (corral.sh/block) when that is set too: a GB200 NVL72 rack is 18
	// nodes of 4 GPUs, one NVLink domain.
	RackNodes, BlockRacks int
}

// NodeName is the name of the fleet's node i.
func NodeName(i int) string { return fmt.Sprintf("gpu-%03d", i) }

// Rack is the rack of node i ("" without racks).
func (f Fleet) Rack(i int) string {
	if f.RackNodes <= 0 {
		return ""
	}
	return fmt.Sprintf("r%02d", i/f.RackNodes)
}

// Block is the block of node i ("" without blocks).
func (f Fleet) Block(i int) string {
	if f.RackNodes <= 0 || f.BlockRacks <= 0 {
		return ""
	}
	return fmt.Sprintf("b%d", i/(f.RackNodes*f.BlockRacks))
}

// labels are node i's labels: KWOK's, and its rack and block.
func (f Fleet) labels(i int) map[string]string {
	out := map[string]string{"type": "kwok"}
	if r := f.Rack(i); r != "" {
		out[kube.LabelCorralRack] = r
	}
	if b := f.Block(i); b != "" {
		out[kube.LabelCorralBlock] = b
	}
	return out
}

// addNodes creates the fleet's nodes (gpu-000, gpu-001...), Ready, with
// nvidia.com/gpu capacity and the product labels corral reads.
func (r *Rig) addNodes(ctx context.Context, f Fleet) error {
	for i := range f.Nodes {
		n := kubetest.Node{Name: NodeName(i), GPUs: f.GPUs, Product: f.Product, GPUMemMiB: 81559,
			CPU: or(f.CPU, "192"), Memory: or(f.Memory, "2Ti"), Labels: f.labels(i)}
		if _, err := r.AddNode(ctx, n); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	return nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Namespace creates a namespace with its default ServiceAccount (no
// controller here makes it), or leaves an existing one.
func (r *Rig) Namespace(ctx context.Context, name string) error {
	_, err := r.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	_, err = r.Client.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: service account: %w", name, err)
	}
	return nil
}

var errStopped = errors.New("stopped")

func itoa(i int) string { return strconv.Itoa(i) }

package peers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/corral-sched/corral/internal/workload"
)

const (
	kueueMetricsCerts = "/etc/kueue/metrics/certs"
	kueueQueueLabel   = "kueue.x-k8s.io/queue-name"
	localQueueName    = "replay"
	kueueFlavor       = "default"
)

var (
	kueueGroup       = "kueue.x-k8s.io/v1beta2"
	resourceFlavor   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"}
	clusterQueue     = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	localQueue       = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
	topologyResource = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "topologies"}
)

// kueueConfig is Kueue's Configuration: Jobs only, no leader election,
// and no webhooks registered with the API server (the replay creates its
// Jobs suspended with their queue label, as the webhook would), so the
// webhook server only needs a certificate to start.
const kueueConfig = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health: {healthProbeBindAddress: "127.0.0.1:0"}
metrics: {bindAddress: "0"}
leaderElection: {leaderElect: false}
webhook: {port: %d, host: 127.0.0.1, certDir: %q}
internalCertManagement: {enable: false}
clientConnection: {qps: %g, burst: %d}
integrations: {frameworks: ["batch/job"]}
`

// KueueCRDDir is where scripts/deps/30-peers.sh puts Kueue's CRDs.
func (r *Rig) KueueCRDDir() string {
	if d := os.Getenv("CORRAL_KUEUE_CRD"); d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(r.Bin), "kueue-crd")
}

// startKueue installs Kueue's CRDs, its queues for w's tenants, and runs
// its manager.
func (r *Rig) startKueue(ctx context.Context, dir string, w workload.Workload, o Options) error {
	if err := need(r.Bin, "kueue"); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(r.KueueCRDDir(), "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no Kueue CRDs in %s (run scripts/deps/30-peers.sh)", r.KueueCRDDir())
	}
	if err := r.ApplyCRDs(ctx, files...); err != nil {
		return fmt.Errorf("kueue CRDs: %w", err)
	}
	if err := r.Namespace(ctx, "kueue-system"); err != nil {
		return err
	}
	if err := r.kueueQueues(ctx, w, o.GPUs, o.Scheduler == KueueTAS); err != nil {
		return err
	}
	certDir := filepath.Join(dir, "kueue-certs")
	if err := writeSelfSigned(certDir); err != nil {
		return err
	}
	// Without internal cert management (which waits for its webhook
	// Service, unreachable here) Kueue reads its metrics certificate from a
	// fixed path; scripts/deps/30-peers.sh makes it writable.
	if err := writeSelfSigned(kueueMetricsCerts); err != nil {
		return fmt.Errorf("kueue reads its metrics certificate from %s: %w (run scripts/deps/30-peers.sh)", kueueMetricsCerts, err)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	config := filepath.Join(dir, "kueue.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, kueueConfig, port, certDir, o.QPS, int(2*o.QPS)), 0o600); err != nil {
		return fmt.Errorf("kueue config: %w", err)
	}
	p, err := r.run(dir, "kueue", filepath.Join(r.Bin, "kueue"), "--config="+config, "--kubeconfig="+r.Kubeconfig,
		"--feature-gates=VisibilityOnDemand=false")
	if err != nil {
		return err
	}
	// Ready when it has made a LocalQueue's status: its controllers run.
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("kueue exited:\n%s", p.Tail())
		}
		lq, err := r.Dynamic.Resource(localQueue).Namespace(dnsName(tenant(w.Arrivals[0]), "t")).Get(ctx, localQueueName, metav1GetOptions)
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(lq.Object, "status", "conditions")
		return len(conds) > 0, nil
	})
}

// kueueQueues makes one ResourceFlavor, a ClusterQueue per tenant with
// its share of the fleet's GPUs (its share of the workload's GPU-hours, as
// the kueue-like model gives it) in cohort "fleet", which lends what is
// unused and reclaims it, and a LocalQueue in each tenant's namespace.
// With tas the flavor names a Topology of the fleet's levels (kueueTopology).
func (r *Rig) kueueQueues(ctx context.Context, w workload.Workload, gpus int, tas bool) error {
	spec := map[string]any{}
	if tas {
		if err := r.kueueTopology(ctx); err != nil {
			return err
		}
		// A TAS flavor must select its nodes by at least one label.
		spec = map[string]any{"nodeLabels": map[string]any{"type": "kwok"}, "topologyName": kueueTopologyName}
	}
	flavor := obj("ResourceFlavor", kueueFlavor, "", spec)
	if _, err := r.Dynamic.Resource(resourceFlavor).Create(ctx, flavor, metav1CreateOptions); err != nil {
		return fmt.Errorf("resource flavor: %w", err)
	}
	shares := TenantShares(w)
	names := make([]string, 0, len(shares))
	for t := range shares {
		names = append(names, t)
	}
	slices.Sort(names)
	left := gpus
	for i, t := range names {
		n := int(shares[t] * float64(gpus))
		if i == len(names)-1 {
			n = left
		}
		left -= n
		ns := dnsName(t, "t")
		spec := map[string]any{
			"cohortName":        "fleet",
			"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}},
			"queueingStrategy":  "BestEffortFIFO",
			"preemption":        map[string]any{"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu", "memory", gpuResource},
				"flavors": []any{map[string]any{"name": kueueFlavor, "resources": []any{
					map[string]any{"name": "cpu", "nominalQuota": "100000"},
					map[string]any{"name": "memory", "nominalQuota": "1000Ti"},
					map[string]any{"name": gpuResource, "nominalQuota": fmt.Sprint(n)},
				}}},
			}},
		}
		if _, err := r.Dynamic.Resource(clusterQueue).Create(ctx, obj("ClusterQueue", ns, "", spec), metav1CreateOptions); err != nil {
			return fmt.Errorf("cluster queue %s: %w", ns, err)
		}
		lq := obj("LocalQueue", localQueueName, ns, map[string]any{"clusterQueue": ns})
		if _, err := r.Dynamic.Resource(localQueue).Namespace(ns).Create(ctx, lq, metav1CreateOptions); err != nil {
			return fmt.Errorf("local queue %s: %w", ns, err)
		}
	}
	return nil
}

// kueueTopologyName is the Topology KueueTAS's flavor names.
const kueueTopologyName = "fleet"

// kueueTopology makes the Topology of the fleet's levels, outermost
// first, as Kueue's TAS guide writes one: block, rack, and the node
// itself (kubernetes.io/hostname), which lets Kueue assign each pod its
// node.
func (r *Rig) kueueTopology(ctx context.Context) error {
	var levels []any
	for _, l := range []string{levelLabels["block"], levelLabels["rack"], "kubernetes.io/hostname"} {
		levels = append(levels, map[string]any{"nodeLabel": l})
	}
	t := obj("Topology", kueueTopologyName, "", map[string]any{"levels": levels})
	if _, err := r.Dynamic.Resource(topologyResource).Create(ctx, t, metav1CreateOptions); err != nil {
		return fmt.Errorf("topology: %w", err)
	}
	return nil
}

// TenantShares is each tenant's share of w's GPU-hours: its Kueue quota
// and its Slurm fair share, as internal/sim entitles it.
func TenantShares(w workload.Workload) map[string]float64 {
	work, total := map[string]float64{}, 0.0
	for _, a := range w.Arrivals {
		h := gpuTime(a).Hours()
		work[tenant(a)] += h
		total += h
	}
	for t := range work {
		if total > 0 {
			work[t] /= total
		} else {
			work[t] = 1 / float64(len(work))
		}
	}
	return work
}

// gpuTime is a's GPUs times its duration (its one task shape).
func gpuTime(a workload.Arrival) time.Duration {
	return time.Duration(a.Job.Tasks()*a.Job.Groups[0].Task.GPUs) * a.Duration
}

func obj(kind, name, namespace string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": kueueGroup, "kind": kind,
		"metadata": map[string]any{"name": name}, "spec": spec}}
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	return u
}

// writeSelfSigned writes tls.crt and tls.key for 127.0.0.1 into dir.
func writeSelfSigned(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cert dir: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("key: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kueue-webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("certificate: %w", err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("key: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("certificate: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
}

var (
	metav1GetOptions    = metav1.GetOptions{}
	metav1CreateOptions = metav1.CreateOptions{}
)

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

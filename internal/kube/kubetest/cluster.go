package kubetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// adminTokenUser is the user of the admin token.
const adminTokenUser = "admin"

// Cluster is a running control plane.
type Cluster struct {
	Config  *rest.Config // admin credentials
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	Dir     string // certificates, logs and the etcd data
	// Scheduler is the path of the upstream kube-scheduler binary, or
	// empty when it was not built.
	Scheduler string
	etcd, api *Process
}

// Start runs etcd and kube-apiserver in a fresh directory under dir and
// waits until the API server is ready and the CRDs of deploy/crds are
// established.
func Start(ctx context.Context, dir string) (*Cluster, error) {
	return StartWithEtcd(ctx, dir, "")
}

// StartWithEtcd is Start with the etcd binary at etcd (empty: the one
// Start finds).
func StartWithEtcd(ctx context.Context, dir, etcd string) (*Cluster, error) {
	return startCluster(ctx, dir, etcd, true)
}

// StartBare is Start without the CRDs of deploy/crds: for installing
// them as a user would (the chart's tests).
func StartBare(ctx context.Context, dir string) (*Cluster, error) {
	return startCluster(ctx, dir, "", false)
}

func startCluster(ctx context.Context, dir, etcd string, crds bool) (*Cluster, error) {
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	if etcd != "" {
		bins.etcd = etcd
	}
	c := &Cluster{Dir: dir}
	if _, err := os.Stat(bins.scheduler); err == nil {
		c.Scheduler = bins.scheduler
	}
	if err := c.start(ctx, bins, crds); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, bins binaries, crds bool) error {
	p, err := writePKI(c.Dir)
	if err != nil {
		return err
	}
	etcdURL, err := c.startEtcd(ctx, bins.etcd)
	if err != nil {
		return err
	}
	token, err := randomToken()
	if err != nil {
		return err
	}
	tokens := filepath.Join(c.Dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+","+adminTokenUser+",admin-uid,system:masters\n"), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", tokens, err)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	c.api, err = StartProcess(c.Dir, nil, "kube-apiserver", bins.apiserver,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+itoa(port),
		"--tls-cert-file="+p.certFile, "--tls-private-key-file="+p.keyFile,
		"--client-ca-file="+p.caFile, "--token-auth-file="+tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+p.saPub, "--service-account-signing-key-file="+p.saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		// Kubernetes' own gang API, the Workload API (scheduling.k8s.io
		// PodGroup, pod spec.schedulingGroup): v1beta1 in 1.37, v1alpha3
		// still served; topology constraints behind their own gate.
		"--runtime-config=scheduling.k8s.io/v1alpha3=true,scheduling.k8s.io/v1beta1=true",
		"--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
	)
	if err != nil {
		return err
	}
	host := "https://127.0.0.1:" + itoa(port)
	wait, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := waitHTTP(wait, c.api, host+"/readyz", p.caPEM, token); err != nil {
		return err
	}
	c.Config = &rest.Config{
		Host:            host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.caPEM},
		QPS:             500,
		Burst:           1000,
	}
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(c.Config); err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	if !crds {
		return nil
	}
	return c.applyCRDs(wait)
}

func (c *Cluster) startEtcd(ctx context.Context, bin string) (string, error) {
	clientPort, err := freePort()
	if err != nil {
		return "", err
	}
	peerPort, err := freePort()
	if err != nil {
		return "", err
	}
	clientURL := "http://127.0.0.1:" + itoa(clientPort)
	peerURL := "http://127.0.0.1:" + itoa(peerPort)
	c.etcd, err = StartProcess(c.Dir, nil, "etcd", bin,
		"--name=test", "--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=test="+peerURL,
		"--unsafe-no-fsync", "--quota-backend-bytes=4294967296",
	)
	if err != nil {
		return "", err
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return clientURL, waitHTTP(wait, c.etcd, clientURL+"/health", nil, "")
}

// Stop ends the API server and etcd.
func (c *Cluster) Stop() {
	c.api.Stop()
	c.etcd.Stop()
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// shared is the control plane of this test binary, started by Main.
var shared struct {
	cluster *Cluster
	missing error // why there is none
}

// Main starts one control plane for the test binary, runs the tests and
// stops it. Call it from TestMain: os.Exit(kubetest.Main(m)). When the
// binaries are missing the tests run and skip (or fail under
// CORRAL_INTEGRATION=1) in Shared.
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "corral-kube-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubetest:", err)
		return 1
	}
	c, err := Start(context.Background(), dir)
	if err != nil {
		shared.missing = err
	} else {
		shared.cluster = c
	}
	code := m.Run()
	if c != nil {
		c.Stop()
	}
	if code == 0 || os.Getenv("CORRAL_KEEP_KUBE") == "" {
		os.RemoveAll(dir)
	}
	return code
}

// Shared returns the binary's control plane, or skips t when there is
// none: fails it instead when CORRAL_INTEGRATION=1.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	if shared.cluster != nil {
		return shared.cluster
	}
	if shared.missing == nil {
		t.Fatal("kubetest.Shared needs kubetest.Main in TestMain")
	}
	if !errors.Is(shared.missing, ErrNoBinaries) {
		t.Fatalf("starting the Kubernetes control plane: %v", shared.missing)
	}
	if os.Getenv("CORRAL_INTEGRATION") == "1" {
		t.Fatalf("no Kubernetes control plane (CORRAL_INTEGRATION=1): %v", shared.missing)
	}
	t.Skipf("skipping: no Kubernetes control plane: %v", shared.missing)
	return nil
}

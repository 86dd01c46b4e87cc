package kubetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// StartFor starts a control plane for t alone and stops it when t ends.
// It skips t when the binaries are missing (fails it under
// CORRAL_INTEGRATION=1). Prefer Main and Shared when a package has many
// such tests.
func StartFor(t testing.TB) *Cluster {
	t.Helper()
	c, err := Start(context.Background(), t.TempDir())
	return startedFor(t, c, err)
}

// StartBareFor is StartFor without the CRDs of deploy/crds (StartBare).
func StartBareFor(t testing.TB) *Cluster {
	t.Helper()
	c, err := StartBare(context.Background(), t.TempDir())
	return startedFor(t, c, err)
}

func startedFor(t testing.TB, c *Cluster, err error) *Cluster {
	t.Helper()
	switch {
	case err == nil:
		t.Cleanup(c.Stop)
		return c
	case errors.Is(err, ErrNoBinaries) && os.Getenv("CORRAL_INTEGRATION") != "1":
		t.Skipf("skipping: no Kubernetes control plane: %v", err)
	default:
		t.Fatalf("starting the Kubernetes control plane: %v", err)
	}
	return nil
}

// WriteKubeconfig writes an admin kubeconfig for the cluster to dir and
// returns its path.
func (c *Cluster) WriteKubeconfig(dir string) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: c.Config.BearerToken}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	cfg.CurrentContext = "test"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// StartControllers runs kube-controller-manager against the cluster with
// only the named controllers (for example "resourceclaim-controller")
// until t ends, and fails t when it exits at start. It is found beside
// the API server (scripts/deps/10-kube.sh builds it).
func (c *Cluster) StartControllers(t testing.TB, controllers string) {
	t.Helper()
	bins, err := findBinaries()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(filepath.Dir(bins.apiserver), "kube-controller-manager")
	dir := t.TempDir()
	kubeconfig, err := c.WriteKubeconfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := StartProcess(dir, nil, "kube-controller-manager", bin, "--kubeconfig="+kubeconfig,
		"--controllers="+controllers, "--leader-elect=false", "--secure-port=0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	time.Sleep(time.Second) // it serves no health endpoint here
	if p.Exited() {
		t.Fatalf("kube-controller-manager exited at start:\n%s", p.Tail())
	}
}

package kubetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

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

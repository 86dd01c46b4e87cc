package kubetest

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// SchedulerUser is the user corral runs as when deployed from deploy/:
// the ServiceAccount corral-system/corral-scheduler of deploy/rbac.yaml.
const SchedulerUser = "system:serviceaccount:corral-system:corral-scheduler"

// Identity is a set of clients acting as one user, through the admin
// credential's right to impersonate, and the count of the requests the
// API server forbade them.
type Identity struct {
	User      string
	Config    *rest.Config
	Client    kubernetes.Interface
	Dynamic   dynamic.Interface
	Forbidden *atomic.Int64
}

// As returns clients acting as user, a member of groups (besides
// system:authenticated, which the API server adds).
func (c *Cluster) As(user string, groups ...string) (*Identity, error) {
	rc := rest.CopyConfig(c.Config)
	rc.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	id := &Identity{User: user, Config: rc, Forbidden: &atomic.Int64{}}
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && resp.StatusCode == http.StatusForbidden {
				id.Forbidden.Add(1)
			}
			return resp, err
		})
	})
	var err error
	if id.Client, err = kubernetes.NewForConfig(rc); err != nil {
		return nil, fmt.Errorf("client as %s: %w", user, err)
	}
	if id.Dynamic, err = dynamic.NewForConfig(rc); err != nil {
		return nil, fmt.Errorf("dynamic client as %s: %w", user, err)
	}
	return id, nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// rbacOnce applies deploy/rbac.yaml once per control plane.
var rbacOnce struct {
	sync.Mutex
	done map[*Cluster]bool
}

// ApplyDeployRBAC applies deploy/rbac.yaml (its Namespace, ServiceAccount,
// ClusterRole, Role and bindings) once per control plane.
func (c *Cluster) ApplyDeployRBAC(ctx context.Context) error {
	rbacOnce.Lock()
	defer rbacOnce.Unlock()
	if rbacOnce.done[c] {
		return nil
	}
	crds, err := CRDDir()
	if err != nil {
		return err
	}
	if err := c.Apply(ctx, filepath.Join(filepath.Dir(crds), "rbac.yaml")); err != nil {
		return err
	}
	if rbacOnce.done == nil {
		rbacOnce.done = map[*Cluster]bool{}
	}
	rbacOnce.done[c] = true
	return nil
}

// Deployed returns clients acting as corral does when deployed from
// deploy/ (SchedulerUser, with the permissions of deploy/rbac.yaml only),
// and fails t at its end if the API server forbade any of their requests.
func (c *Cluster) Deployed(t testing.TB) *Identity {
	t.Helper()
	if err := c.ApplyDeployRBAC(context.Background()); err != nil {
		t.Fatalf("deploy/rbac.yaml: %v", err)
	}
	id, err := c.As(SchedulerUser, "system:serviceaccounts", "system:serviceaccounts:corral-system")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if n := id.Forbidden.Load(); n != 0 {
			t.Errorf("%d requests of %s forbidden by deploy/rbac.yaml", n, SchedulerUser)
		}
	})
	return id
}

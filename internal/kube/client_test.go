package kube

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// inCluster lays out what Kubernetes gives a pod of the deploy
// ServiceAccount (deploy/rbac.yaml): its token and the CA in a directory,
// and the API server's address in the environment.
func (e *env) inCluster() ClientOptions {
	e.t.Helper()
	ctx := context.Background()
	crds, err := kubetest.CRDDir()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.Apply(ctx, filepath.Join(filepath.Dir(crds), "rbac.yaml")); err != nil {
		e.t.Fatal(err)
	}
	hour := int64(3600)
	tr, err := e.c.Client.CoreV1().ServiceAccounts("corral-system").CreateToken(ctx, "corral-scheduler",
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	dir := e.t.TempDir()
	for name, data := range map[string][]byte{"token": []byte(tr.Status.Token), "ca.crt": e.c.Config.CAData} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			e.t.Fatal(err)
		}
	}
	u, err := url.Parse(e.c.Config.Host)
	if err != nil {
		e.t.Fatal(err)
	}
	env := map[string]string{"KUBERNETES_SERVICE_HOST": u.Hostname(), "KUBERNETES_SERVICE_PORT": u.Port()}
	return ClientOptions{InClusterDir: dir, Getenv: func(k string) string { return env[k] }}
}

func TestClientConfigRateLimitsOnEveryPath(t *testing.T) {
	e := newEnv(t)
	in := e.inCluster()
	kubeconfig, err := e.c.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		o          ClientOptions
		qps, burst float32
	}{
		{"in cluster", in, DefaultQPS, DefaultBurst},
		{"kubeconfig", ClientOptions{Kubeconfig: kubeconfig}, DefaultQPS, DefaultBurst},
		{"in cluster, flags", ClientOptions{InClusterDir: in.InClusterDir, Getenv: in.Getenv, QPS: 50, Burst: 70}, 50, 70},
	} {
		rc, err := RESTConfig(tt.o)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if rc.QPS != tt.qps || float32(rc.Burst) != tt.burst {
			t.Errorf("%s: QPS %v burst %d, want %v and %v", tt.name, rc.QPS, rc.Burst, tt.qps, tt.burst)
		}
	}
	if _, err := RESTConfig(ClientOptions{Getenv: func(string) string { return "" }}); err == nil {
		t.Error("in-cluster config outside a cluster: no error")
	}
}

// forbidden counts the API server's 403 answers to the clients of rc.
func forbidden(rc *rest.Config) *atomic.Int64 {
	var n atomic.Int64
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && resp.StatusCode == http.StatusForbidden {
				n.Add(1)
			}
			return resp, err
		})
	})
	return &n
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// In cluster, as the deploy ServiceAccount, corral binds at its own rate,
// not client-go's default 5 QPS (at which 200 bindings take 40 s), and
// makes no request its RBAC forbids.
func TestInClusterSchedulerBindsFastAndIsNotForbidden(t *testing.T) {
	e := newEnv(t)
	const pods = 200
	for i := range pods / 8 {
		e.node(fmt.Sprintf("incluster-%d", i), 8, nil)
	}
	createMany(t, e, e.ns, pods)
	rc, err := RESTConfig(e.inCluster())
	if err != nil {
		t.Fatal(err)
	}
	denied := forbidden(rc)
	took := bindAllWith(t, e, rc, e.ns, pods)
	t.Logf("%d pods bound in %s in cluster (%.0f pods/s)", pods, took, pods/took.Seconds())
	if took > 15*time.Second {
		t.Errorf("%d pods took %s to bind in cluster, want well under the 40 s client-go's defaults take", pods, took)
	}
	if n := denied.Load(); n != 0 {
		t.Errorf("%d requests forbidden to the deploy ServiceAccount", n)
	}
}

// createMany creates n 1-GPU pods in ns, 16 at a time.
func createMany(t *testing.T, e *env, ns string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				p := pod(fmt.Sprintf("p-%04d", i), 1)
				if _, err := e.c.Client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// bindAllWith runs a scheduler on the clients of rc until the n pods of ns
// are bound, and returns how long that took from its caches' sync.
func bindAllWith(t *testing.T, e *env, rc *rest.Config, ns string, n int) time.Duration {
	t.Helper()
	clients, err := NewClients(rc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.Events = clients.Events
	s := New(clients.Client, clients.Dynamic, cfg, testLogger())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan struct{})
	go func() { defer close(done); _ = s.loop(ctx) }()
	defer func() { cancel(); <-done }()
	for deadline := start.Add(5 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		list, err := e.c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		if bound := countBound(list.Items); bound == n {
			return time.Since(start)
		} else if time.Now().After(deadline) {
			t.Fatalf("%d of %d pods bound after %s", bound, n, time.Since(start))
		}
	}
}

func countBound(pods []corev1.Pod) int {
	n := 0
	for i := range pods {
		if pods[i].Spec.NodeName != "" {
			n++
		}
	}
	return n
}

// The measurement of issue 15: pods bound per second in cluster and with a
// kubeconfig, alternating, on one API server. Slow, so it runs only when
// CORRAL_BIND_RATE_PODS says how many pods (bench/kube/bind_rate.sh).
func TestInClusterBindRateMatchesKubeconfig(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CORRAL_BIND_RATE_PODS"))
	if n <= 0 {
		t.Skip("set CORRAL_BIND_RATE_PODS (bench/kube/bind_rate.sh)")
	}
	e := newEnv(t)
	for i := range (n + 7) / 8 {
		e.node(fmt.Sprintf("rate-%d", i), 8, nil)
	}
	kubeconfig, err := e.c.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]ClientOptions{"in-cluster": e.inCluster(), "kubeconfig": {Kubeconfig: kubeconfig}}
	rates := map[string][]float64{}
	for _, mode := range []string{"in-cluster", "kubeconfig", "kubeconfig", "in-cluster"} {
		rc, err := RESTConfig(modes[mode])
		if err != nil {
			t.Fatal(err)
		}
		ns := e.c.Namespace(t)
		createMany(t, e, ns, n)
		took := bindAllWith(t, e, rc, ns, n)
		rates[mode] = append(rates[mode], float64(n)/took.Seconds())
		fmt.Printf("bind-rate: %-10s %d pods in %6.2f s: %6.1f pods/s\n", mode, n, took.Seconds(), float64(n)/took.Seconds())
		deletePods(t, e, ns)
	}
	in, kc := mean(rates["in-cluster"]), mean(rates["kubeconfig"])
	fmt.Printf("bind-rate: in-cluster %.1f pods/s, kubeconfig %.1f pods/s: %.0f%%\n", in, kc, 100*in/kc)
	if in < 0.8*kc {
		t.Errorf("in cluster %.1f pods/s, below 80%% of the %.1f with a kubeconfig", in, kc)
	}
}

func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// deletePods deletes every pod of ns at once and waits until they are gone.
func deletePods(t *testing.T, e *env, ns string) {
	t.Helper()
	ctx, zero := context.Background(), int64(0)
	if err := e.c.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually(func() error {
		list, err := e.c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) > 0 {
			return fmt.Errorf("pods of %s not gone: %v", ns, err)
		}
		return nil
	})
}

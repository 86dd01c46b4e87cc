package kube

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
)

// Client rate limits, for every way of reaching the API server. client-go's
// own defaults (5 QPS, burst 10) bind about two pods a second. Each pod
// costs corral a binding and an event, and a pod that waits a status
// patch: 200 QPS sustains about 100 pods a second, and a burst of 400
// absorbs a cycle that places 200 pods at once, which is what a 5,000-node
// cluster with a few hundred arrivals a minute asks for. The API server's
// priority and fairness still protects it from this client.
const (
	DefaultQPS   = 200
	DefaultBurst = 400
)

// InClusterDir is where Kubernetes mounts a pod's ServiceAccount token and
// the cluster's CA certificate.
const InClusterDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// ClientOptions says how to reach the API server.
type ClientOptions struct {
	// Kubeconfig is a kubeconfig file; empty means in cluster: the
	// ServiceAccount of the pod corral runs in.
	Kubeconfig string
	// QPS and Burst limit the requests of each client; 0 means DefaultQPS
	// and DefaultBurst, a negative QPS no limit.
	QPS   float32
	Burst int
	// InClusterDir holds the token and ca.crt in cluster; default
	// InClusterDir.
	InClusterDir string
	// Getenv reads KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT in
	// cluster; default os.Getenv.
	Getenv func(string) string
}

// RESTConfig builds the client configuration from a kubeconfig, or in
// cluster as rest.InClusterConfig does, and sets the rate limits either
// way.
func RESTConfig(o ClientOptions) (*rest.Config, error) {
	var rc *rest.Config
	var err error
	if o.Kubeconfig != "" {
		rc, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("reading kubeconfig %s: %w", o.Kubeconfig, err)
		}
	} else if rc, err = inClusterConfig(o); err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = o.limits()
	return rc, nil
}

func (o ClientOptions) limits() (float32, int) {
	qps, burst := o.QPS, o.Burst
	if qps == 0 {
		qps = DefaultQPS
	}
	if burst <= 0 {
		burst = DefaultBurst
	}
	return qps, burst
}

// inClusterConfig is rest.InClusterConfig with the directory and the
// environment given, so that tests can take the same path.
func inClusterConfig(o ClientOptions) (*rest.Config, error) {
	getenv, dir := o.Getenv, o.InClusterDir
	if getenv == nil {
		getenv = os.Getenv
	}
	if dir == "" {
		dir = InClusterDir
	}
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, fmt.Errorf("no --kubeconfig and not in a cluster: %w", rest.ErrNotInCluster)
	}
	tokenFile := filepath.Join(dir, "token")
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("in cluster: service account token: %w", err)
	}
	caFile := filepath.Join(dir, "ca.crt")
	if _, err := certutil.NewPool(caFile); err != nil {
		return nil, fmt.Errorf("in cluster: CA certificate: %w", err)
	}
	return &rest.Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
		BearerToken:     string(token),
		BearerTokenFile: tokenFile, // re-read as the kubelet rotates it
	}, nil
}

// Clients are the clients the scheduler needs, each with its own rate
// limiter: events never wait behind bindings, nor bindings behind events.
type Clients struct {
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	Events  kubernetes.Interface
}

// NewClients makes the clients of rc.
func NewClients(rc *rest.Config) (*Clients, error) {
	if rc == nil {
		return nil, errors.New("clients: no configuration")
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	events, err := kubernetes.NewForConfig(rest.CopyConfig(rc))
	if err != nil {
		return nil, fmt.Errorf("event client: %w", err)
	}
	return &Clients{Client: client, Dynamic: dyn, Events: events}, nil
}

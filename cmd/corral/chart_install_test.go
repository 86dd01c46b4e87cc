package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/kube/kubetest"
)

var (
	crdResource   = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	queueResource = schema.GroupVersionResource{Group: "corral.sh", Version: "v1alpha1", Resource: "queues"}
)

const podGroupCRD = "podgroups.scheduling.x-k8s.io"

// helm install on a cluster without corral's CRDs installs both (the
// PodGroup one kept by uninstall); helm upgrade keeps managing the
// PodGroup CRD it installed; a second release beside it leaves that CRD
// to the first. The scheduler, run with the installed Deployment's args
// under a token of the chart's ServiceAccount, binds a pod of a Queue the
// values made, with no request forbidden; --print-topology works as it
// too. helm uninstall removes the rest and keeps the CRDs.
func TestChartInstallsAndSchedules(t *testing.T) {
	helmBin(t) // skip before starting a control plane when there is no helm
	c := kubetest.StartBareFor(t)
	admin, err := c.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := chartDir(t)
	values := []string{"--set", "queues[0].name=research", "--set", "queues[0].tenant=research", "--set", "queues[0].quota.gpus=8"}
	mustHelm(t, admin, append([]string{"install", "corral", dir, "--namespace", "corral-system", "--create-namespace"}, values...)...)
	ctx := context.Background()
	crd := getCRD(t, c, podGroupCRD)
	if crd.GetAnnotations()["helm.sh/resource-policy"] != "keep" || crd.GetAnnotations()["meta.helm.sh/release-name"] != "corral" {
		t.Errorf("PodGroup CRD annotations %v, want it kept and owned by release corral", crd.GetAnnotations())
	}
	getCRD(t, c, "queues.corral.sh")
	mustHelm(t, admin, append([]string{"upgrade", "corral", dir, "--namespace", "corral-system", "--set", "kubeAPI.qps=150"}, values...)...)
	if manifest := mustHelm(t, admin, "get", "manifest", "corral", "--namespace", "corral-system"); !bytes.Contains(manifest, []byte(podGroupCRD)) {
		t.Error("after helm upgrade the release no longer holds the PodGroup CRD it installed")
	}
	mustHelm(t, admin, "install", "other", dir, "--namespace", "other", "--create-namespace")
	if manifest := mustHelm(t, admin, "get", "manifest", "other", "--namespace", "other"); bytes.Contains(manifest, []byte(podGroupCRD)) {
		t.Error("a second release took over the PodGroup CRD another installed")
	}
	mustHelm(t, admin, "uninstall", "other", "--namespace", "other")

	c.CreateNode(t, kubetest.Node{Name: "chart-0", GPUs: 8, Product: "NVIDIA-H100-80GB-HBM3"})
	rc, forbidden := serviceAccountConfig(t, c, "corral-system", "corral-scheduler")
	stop := runChartScheduler(t, c, rc)
	gpus := corev1.ResourceList{kubetest.ResourceGPU: resource.MustParse("4")}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{kube.LabelQueue: "research"}},
		Spec: corev1.PodSpec{SchedulerName: "corral",
			Containers: []corev1.Container{{Name: "c", Image: "x", Resources: corev1.ResourceRequirements{Requests: gpus, Limits: gpus}}}}}
	ns := c.Namespace(t)
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pod p bound to chart-0 and Queue research admitting it", func() bool {
		p, err := c.Client.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
		q, qerr := c.Dynamic.Resource(queueResource).Get(ctx, "research", metav1.GetOptions{})
		admitted, _, _ := unstructured.NestedFieldNoCopy(q.Object, "status", "admitted")
		return err == nil && qerr == nil && p.Spec.NodeName == "chart-0" && fmt.Sprint(admitted) == "1"
	})
	printTopologyAs(t, rc)
	stop()
	if n := forbidden.Load(); n != 0 {
		t.Errorf("%d requests of the chart's ServiceAccount forbidden", n)
	}
	mustHelm(t, admin, "uninstall", "corral", "--namespace", "corral-system")
	getCRD(t, c, podGroupCRD)
	getCRD(t, c, "queues.corral.sh")
	if _, err := c.Client.AppsV1().Deployments("corral-system").Get(ctx, "corral-scheduler", metav1.GetOptions{}); err == nil {
		t.Error("helm uninstall left the Deployment")
	}
}

func getCRD(t *testing.T, c *kubetest.Cluster, name string) *unstructured.Unstructured {
	t.Helper()
	crd, err := c.Dynamic.Resource(crdResource).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("CRD %s: %v", name, err)
	}
	return crd
}

// serviceAccountConfig is a client configuration with a token of the
// ServiceAccount (the TokenRequest API, as the kubelet gets one for a
// pod), counting the requests the API server forbids.
func serviceAccountConfig(t *testing.T, c *kubetest.Cluster, ns, name string) (*rest.Config, *atomic.Int64) {
	t.Helper()
	expire := int64(3600)
	tr, err := c.Client.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &expire}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, name, err)
	}
	rc := &rest.Config{Host: c.Config.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: c.Config.CAData}}
	forbidden := &atomic.Int64{}
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countForbidden{rt, forbidden}
	})
	return rc, forbidden
}

type countForbidden struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c countForbidden) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusForbidden {
		c.n.Add(1)
	}
	return resp, err
}

// runChartScheduler runs corral kube-scheduler with the args of the
// installed Deployment (its pod name for $(POD_NAME), any free port for
// the metrics) on rc, and returns a function that stops it.
func runChartScheduler(t *testing.T, c *kubetest.Cluster, rc *rest.Config) func() {
	t.Helper()
	d, err := c.Client.AppsV1().Deployments("corral-system").Get(context.Background(), "corral-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := chartFlags(t, d.Spec.Template.Spec.Containers[0].Args)
	if f.qps != 150 {
		t.Errorf("--kube-api-qps %v, want the upgrade's 150", f.qps)
	}
	f.httpAddr = "127.0.0.1:0" // any free port: this test reads no endpoint
	rc = rest.CopyConfig(rc)
	rc.QPS, rc.Burst = float32(f.qps), f.burst
	s, log, closeAll, err := f.schedulerOn(rc, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.run(ctx, s, log) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("scheduler: %v", err)
		}
		closeAll()
	}
	t.Cleanup(stop)
	return stop
}

// printTopologyAs runs corral kube-scheduler --print-topology -o json with a
// kubeconfig of rc's token: the one node, its 8 GPUs.
func printTopologyAs(t *testing.T, rc *rest.Config) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthorityData: rc.CAData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: rc.BearerToken}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "sa"}
	cfg.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := kubeSchedulerMain(context.Background(), []string{"--kubeconfig", path, "--print-topology", "-o", "json"}, &stdout, &stderr); err != nil {
		t.Fatalf("--print-topology: %v\n%s", err, stderr.String())
	}
	var topo kube.Topology
	if err := json.Unmarshal(stdout.Bytes(), &topo); err != nil {
		t.Fatalf("--print-topology -o json: %v\n%s", err, stdout.String())
	}
	if topo.Tree == nil || topo.Tree.Nodes != 1 || topo.Tree.GPUs != 8 || len(topo.Levels) == 0 {
		t.Errorf("--print-topology -o json: %s", stdout.String())
	}
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// helmBin is the helm scripts/deps/40-helm.sh builds ($CORRAL_HELM, else
// ~/.cache/corral/bin/helm, else helm on the PATH). Without one the test
// skips, or fails under CORRAL_INTEGRATION=1.
func helmBin(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("CORRAL_HELM")}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".cache", "corral", "bin", "helm"))
	}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	if os.Getenv("CORRAL_INTEGRATION") == "1" {
		t.Fatal("no helm (CORRAL_INTEGRATION=1): run scripts/deps.sh")
	}
	t.Skip("skipping: no helm; scripts/deps.sh builds it")
	return ""
}

// helm runs helm with its own config, cache and data directories (and
// the kubeconfig, when one is given) and returns its stdout.
func helm(t *testing.T, kubeconfig string, args ...string) ([]byte, error) {
	t.Helper()
	bin := helmBin(t)
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	if kubeconfig != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), errors.New("helm " + strings.Join(args, " ") + ": " + err.Error() + ": " + stderr.String())
	}
	return stdout.Bytes(), nil
}

func mustHelm(t *testing.T, kubeconfig string, args ...string) []byte {
	t.Helper()
	out, err := helm(t, kubeconfig, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func chartDir(t *testing.T) string { return filepath.Join(deployDir(t), "chart", "corral") }

// objects decodes a multi-document YAML stream.
func objects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if err != nil {
			if err.Error() == "EOF" {
				return out
			}
			t.Fatal(err)
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return objects(t, data)
}

// ofKind is the one object of kind among objs, converted into out.
func ofKind(t *testing.T, objs []*unstructured.Unstructured, kind string, out any) {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d objects of kind %s, want one", len(found), kind)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(found[0].Object, out); err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
}

// rights expands rules into sorted "group resource verb" lines, one per
// right, so that two ways of writing the same rules compare equal.
func rights(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, g+" "+res+" "+v)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// The chart lints, and its default render is the golden one: the same
// rights as deploy/rbac.yaml (ClusterRole and Role), the release image
// and command of deploy/deployment.yaml with flags corral accepts and
// probes it serves, and corral's CRDs as deploy/crds has them.
func TestChartLintAndDefaultRender(t *testing.T) {
	dir := chartDir(t)
	mustHelm(t, "", "lint", "--strict", dir)
	mustHelm(t, "", "lint", "--strict", dir, "--set", "metrics.serviceMonitor.enabled=true",
		"--set", "queues[0].name=research", "--set", "queues[0].quota.gpus=64",
		"--set", "topology.levels[0].name=rack", "--set", "topology.levels[0].labels[0]=example.com/rack")
	out := mustHelm(t, "", "template", "corral", dir, "--namespace", "corral-system", "--include-crds")
	golden := filepath.Join("testdata", "chart-default.yaml")
	if *update {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	} else if want, err := os.ReadFile(golden); err != nil || !bytes.Equal(out, want) {
		t.Errorf("helm template differs from %s (go test -run %s -update rewrites it): %v\n%s", golden, t.Name(), err, out)
	}
	rendered := objects(t, out)
	kustomize := readObjects(t, filepath.Join(deployDir(t), "rbac.yaml"))
	for _, kind := range []string{"ClusterRole", "Role"} {
		var chart, kust rbacv1.ClusterRole // a Role's rules decode the same
		ofKind(t, rendered, kind, &chart)
		ofKind(t, kustomize, kind, &kust)
		if got, want := rights(chart.Rules), rights(kust.Rules); !slices.Equal(got, want) {
			t.Errorf("the chart's %s grants\n%s\ndeploy/rbac.yaml's\n%s", kind, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	checkChartDeployment(t, rendered)
	for _, f := range [][2]string{
		{"crds/corral.sh_queues.yaml", "../../crds/corral.sh_queues.yaml"},
		{"files/scheduling.x-k8s.io_podgroups.yaml", "../../crds/scheduling.x-k8s.io_podgroups.yaml"},
	} {
		a, errA := os.ReadFile(filepath.Join(dir, f[0]))
		b, errB := os.ReadFile(filepath.Join(dir, f[1]))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("the chart's %s is not deploy/crds' copy (%v %v): copy it again", f[0], errA, errB)
		}
	}
}

// checkChartDeployment checks the rendered Deployment against
// deploy/deployment.yaml and the flags corral kube-scheduler takes.
func checkChartDeployment(t *testing.T, rendered []*unstructured.Unstructured) {
	t.Helper()
	var chart, kust appsv1.Deployment
	ofKind(t, rendered, "Deployment", &chart)
	readYAML(t, filepath.Join(deployDir(t), "deployment.yaml"), &kust)
	c, k := chart.Spec.Template.Spec.Containers[0], kust.Spec.Template.Spec.Containers[0]
	if c.Image != k.Image || !slices.Equal(c.Command, k.Command) {
		t.Errorf("the chart runs %s %v, deploy/ %s %v", c.Image, c.Command, k.Image, k.Command)
	}
	if *chart.Spec.Replicas != *kust.Spec.Replicas || chart.Spec.Template.Spec.ServiceAccountName != "corral-scheduler" {
		t.Errorf("replicas %d, service account %s", *chart.Spec.Replicas, chart.Spec.Template.Spec.ServiceAccountName)
	}
	f := chartFlags(t, c.Args)
	if !f.leaderElect || f.leaseNamespace != "corral-system" || f.accountingCMs != "corral-system/corral-scheduler-accounting" ||
		f.unitMemoryCM != "corral-system/corral-scheduler-memory" || f.levelsSet {
		t.Errorf("flags %+v: want leader election, accounting and the units' memory in the release's namespace, and the default levels", f)
	}
	_, port, _ := strings.Cut(f.httpAddr, ":")
	checkProbes(t, c, port)
}

// chartFlags parses a container's args as corral kube-scheduler does.
func chartFlags(t *testing.T, args []string) *kubeSchedulerFlags {
	t.Helper()
	args = slices.Clone(args)
	for i := range args {
		args[i] = strings.ReplaceAll(args[i], "$(POD_NAME)", "corral-scheduler-0")
	}
	f, err := parseKubeSchedulerFlags(args, &strings.Builder{})
	if err != nil {
		t.Fatalf("the chart's args %v: %v", args, err)
	}
	return f
}

// Values the chart cannot honour are refused, and the switches render
// what they say: a ServiceMonitor on the Service's port, Queues, levels
// as corral parses them, no PodGroup CRD with podGroupCRD.install=false.
func TestChartValues(t *testing.T) {
	dir := chartDir(t)
	for _, bad := range [][]string{
		{"--set", "replicas=2", "--set", "leaderElection.enabled=false"},
		{"--set", "podGroupCRD.install=maybe"},
		{"--set", "queues[0].tenant=x"},
	} {
		if _, err := helm(t, "", append([]string{"template", "corral", dir}, bad...)...); err == nil {
			t.Errorf("helm template %v rendered", bad)
		}
	}
	out := mustHelm(t, "", "template", "corral", dir, "--set", "metrics.serviceMonitor.enabled=true",
		"--set", "podGroupCRD.install=false", "--set", "queues[0].name=research", "--set", "queues[0].quota.gpus=64",
		"--set", "topology.levels[0].name=rack", "--set", "topology.levels[0].labels={example.com/rack,other.example/rack}",
		"--set", "topology.nvlinkLevel=rack")
	objs := objects(t, out)
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			t.Errorf("podGroupCRD.install=false rendered CRD %s", o.GetName())
		}
	}
	var q unstructured.Unstructured
	ofKind(t, objs, "Queue", &q.Object)
	if gpus, _, _ := unstructured.NestedFieldNoCopy(q.Object, "spec", "quota", "gpus"); q.GetName() != "research" || fmt.Sprint(gpus) != "64" {
		t.Errorf("queue %s with %v GPUs, want research with 64", q.GetName(), gpus)
	}
	var sm unstructured.Unstructured
	ofKind(t, objs, "ServiceMonitor", &sm.Object)
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	var svc corev1.Service
	ofKind(t, objs, "Service", &svc)
	if len(eps) != 1 || len(svc.Spec.Ports) != 1 || eps[0].(map[string]any)["port"] != svc.Spec.Ports[0].Name {
		t.Errorf("ServiceMonitor endpoints %v, Service ports %+v: want the Service's one port", eps, svc.Spec.Ports)
	}
	var d appsv1.Deployment
	ofKind(t, objs, "Deployment", &d)
	f := chartFlags(t, d.Spec.Template.Spec.Containers[0].Args)
	cfg, err := f.config()
	if err != nil || len(cfg.Levels) != 1 || !slices.Equal(cfg.Levels[0].Labels, []string{"example.com/rack", "other.example/rack"}) || cfg.NVLinkLevel != "rack" {
		t.Errorf("levels %+v, NVLink level %q (%v)", cfg.Levels, cfg.NVLinkLevel, err)
	}
}

package main

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/kube/kubetest"
	"github.com/corral-sched/corral/internal/ociimage"
)

// deployDir is the repository's deploy/.
func deployDir(t *testing.T) string {
	t.Helper()
	crds, err := kubetest.CRDDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(crds)
}

// image is what the last stage of a Dockerfile puts in the image.
type image struct {
	copied     []string // destinations of COPY
	entrypoint []string
	expose     []string
}

// parseDockerfile reads the final stage of a Dockerfile: its COPY
// destinations, its ENTRYPOINT (exec form) and its EXPOSE ports.
func parseDockerfile(t *testing.T, path string) image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var img image
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(instr) {
		case "FROM":
			img = image{} // a new stage: only the last one is the image
		case "COPY":
			fields := strings.Fields(rest)
			img.copied = append(img.copied, fields[len(fields)-1])
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(rest), &img.entrypoint); err != nil {
				t.Fatalf("%s: ENTRYPOINT %s: want the exec form: %v", path, rest, err)
			}
		case "EXPOSE":
			img.expose = append(img.expose, strings.Fields(rest)...)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return img
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The Deployment runs the binary where the Dockerfile puts it (distroless
// has no shell and no corral on its PATH), with flags corral accepts, and
// probes the endpoint those flags serve.
func TestDeployDockerfileAndDeploymentAgree(t *testing.T) {
	dir := deployDir(t)
	img := parseDockerfile(t, filepath.Join(dir, "Dockerfile"))
	var d appsv1.Deployment
	readYAML(t, filepath.Join(dir, "deployment.yaml"), &d)
	c := d.Spec.Template.Spec.Containers[0]
	if len(c.Command) < 2 || c.Command[1] != "kube-scheduler" {
		t.Fatalf("command %v, want [BINARY kube-scheduler]", c.Command)
	}
	bin := c.Command[0]
	if !filepath.IsAbs(bin) || !slices.Contains(img.copied, bin) || len(img.entrypoint) == 0 || img.entrypoint[0] != bin {
		t.Errorf("the Deployment runs %q; the image has %v with ENTRYPOINT %v: want the path the Dockerfile copies the binary to", bin, img.copied, img.entrypoint)
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = strings.ReplaceAll(a, "$(POD_NAME)", "corral-scheduler-0")
	}
	f, err := parseKubeSchedulerFlags(args, &strings.Builder{})
	if err != nil {
		t.Fatalf("the Deployment's args %v: %v", c.Args, err)
	}
	_, port, err := net.SplitHostPort(f.httpAddr)
	if err != nil {
		t.Fatalf("--http-address %q: %v", f.httpAddr, err)
	}
	if !slices.Contains(img.expose, port) {
		t.Errorf("the image exposes %v, not the --http-address port %s", img.expose, port)
	}
	checkProbes(t, c, port)
}

// checkProbes checks that the container's probes reach the port of
// --http-address at paths the scheduler serves.
func checkProbes(t *testing.T, c corev1.Container, port string) {
	t.Helper()
	named := map[string]string{}
	for _, p := range c.Ports {
		named[p.Name] = strconv.Itoa(int(p.ContainerPort))
	}
	s := kube.New(fake.NewClientset(), nil, kube.Config{}, nil)
	h := s.Handler()
	for what, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("no HTTP %s probe", what)
			continue
		}
		if got := named[p.HTTPGet.Port.String()]; got != port && p.HTTPGet.Port.String() != port {
			t.Errorf("%s probe on port %s (%s), want --http-address's %s", what, p.HTTPGet.Port.String(), got, port)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p.HTTPGet.Path, nil))
		if rec.Code == http.StatusNotFound {
			t.Errorf("%s probe path %s: the scheduler does not serve it", what, p.HTTPGet.Path)
		}
	}
}

// The CRDs' short names are none of Kueue's (ClusterQueue cq; LocalQueue
// queue, queues, lq; ResourceFlavor rf, flavor, flavors; Workload wl) nor
// Volcano's Queue's (q): kubectl resolves a short name to one resource.
func TestCRDShortNamesAvoidKueueAndVolcano(t *testing.T) {
	taken := []string{"cq", "queue", "queues", "lq", "rf", "flavor", "flavors", "wl", "q"}
	crds, _ := filepath.Glob(filepath.Join(deployDir(t), "crds", "*.yaml"))
	if len(crds) == 0 {
		t.Fatal("no CRDs in deploy/crds")
	}
	for _, path := range crds {
		var crd unstructured.Unstructured
		readYAML(t, path, &crd.Object)
		short, _, err := unstructured.NestedStringSlice(crd.Object, "spec", "names", "shortNames")
		if err != nil {
			t.Fatalf("%s: spec.names.shortNames: %v", path, err)
		}
		for _, s := range short {
			if slices.Contains(taken, s) {
				t.Errorf("%s: short name %q is taken by Kueue or Volcano", filepath.Base(path), s)
			}
		}
	}
}

// The Deployment runs a release image by its version tag, the binary path
// and port the release image (internal/ociimage) has, and kustomization's
// images: names that image, so that one line sets another.
func TestDeployRunsTheReleaseImage(t *testing.T) {
	dir := deployDir(t)
	var d appsv1.Deployment
	readYAML(t, filepath.Join(dir, "deployment.yaml"), &d)
	c := d.Spec.Template.Spec.Containers[0]
	repo, tag, ok := strings.Cut(c.Image, ":")
	if !ok || repo != ociimage.Repository || tag == "latest" || !strings.HasPrefix(tag, "v") {
		t.Errorf("image %q, want %s:vX.Y.Z", c.Image, ociimage.Repository)
	}
	if len(c.Command) == 0 || c.Command[0] != ociimage.BinaryPath {
		t.Errorf("command %v, want the release image's %s", c.Command, ociimage.BinaryPath)
	}
	if p := c.Ports[0]; strconv.Itoa(int(p.ContainerPort))+"/tcp" != ociimage.Port {
		t.Errorf("container port %d, the release image exposes %s", p.ContainerPort, ociimage.Port)
	}
	var k struct {
		Images []struct{ Name, NewName, NewTag string } `json:"images"`
	}
	readYAML(t, filepath.Join(dir, "kustomization.yaml"), &k)
	if len(k.Images) != 1 || k.Images[0].Name != repo || k.Images[0].NewTag != tag {
		t.Errorf("kustomization images %+v, want one entry for %s with newTag %s", k.Images, repo, tag)
	}
}

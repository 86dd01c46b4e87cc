package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/kube/kubetest"
)

func TestKubeSchedulerHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"kube-scheduler", "-h"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"schedulerName", "nvidia.com/mig-1g.10gb", "scheduling.x-k8s.io/pod-group", "--leader-elect", "-topology-levels", "FailedScheduling"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestKubeSchedulerBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--topology-levels", "rack"}, 1},
		{[]string{"--nvlink-level", "pod", "--topology-levels", "rack=r"}, 1},
		{[]string{"--node-selector", "a=(", "--kubeconfig", "/nonexistent"}, 1},
		{[]string{"--kubeconfig", "/nonexistent/kubeconfig", "--leader-elect=false"}, 1},
		{[]string{"--print-topology", "-o", "yaml"}, 1},
		{[]string{"--print-topology", "--kubeconfig", "/nonexistent/kubeconfig"}, 1},
		{[]string{"--nvlink-level", "clique", "--topology-levels", "rack=r"}, 1}, // clique is a default level only
		{[]string{"--reservations", "-1", "--kubeconfig", "/nonexistent"}, 1},
		{[]string{"--defrag", "--defrag-moves-per-hour", "0", "--kubeconfig", "/nonexistent"}, 1},
		{[]string{"extra"}, 2}, // a usage error
	} {
		var errb bytes.Buffer
		if code := run(append([]string{"kube-scheduler"}, tc.args...), &bytes.Buffer{}, &errb); code != tc.code {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, code, tc.code, errb.String())
		}
	}
}

func TestKubeSchedulerBindsAPod(t *testing.T) {
	c := kubetest.StartFor(t)
	kubeconfig, err := c.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c.CreateNode(t, kubetest.Node{Name: "cmd-0", GPUs: 8, Product: "NVIDIA-H100-80GB-HBM3"})
	ns := c.Namespace(t)
	gpus := corev1.ResourceList{kubetest.ResourceGPU: resource.MustParse("4")}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{SchedulerName: "corral",
		Containers: []corev1.Container{{Name: "c", Image: "x", Resources: corev1.ResourceRequirements{Requests: gpus, Limits: gpus}}}}}
	ctx := context.Background()
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	var logs bytes.Buffer
	out := &syncWriter{w: &logs}
	go func() {
		done <- kubeSchedulerMain(runCtx, []string{"--kubeconfig", kubeconfig, "--leader-elect-namespace", ns, "--id", "one",
			"--http-address", "127.0.0.1:0", "--kube-api-qps", "100", "--kube-api-burst", "150"}, io.Discard, out)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := c.Client.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
		if err == nil && p.Spec.NodeName == "cmd-0" {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("pod not bound: %v %v", p.Spec.NodeName, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	addr := servingAddress(t, out)
	checkEndpoints(t, "http://"+addr)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "qps=100 burst=150") {
		t.Errorf("the log does not show the client limits of the flags:\n%s", logs.String())
	}
}

// servingAddress is the address the scheduler's log says it serves its
// endpoints on (--http-address 127.0.0.1:0 takes any free port, where a
// port picked free beforehand may be taken by a test running beside).
func servingAddress(t *testing.T, log *syncWriter) string {
	t.Helper()
	re := regexp.MustCompile(`msg="serving health and metrics" address=(\S+)`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		log.mu.Lock()
		m := re.FindStringSubmatch(fmt.Sprint(log.w))
		log.mu.Unlock()
		if m != nil {
			return m[1]
		}
	}
	t.Fatal("the scheduler's log names no address it serves on")
	return ""
}

// checkEndpoints checks the probes and metrics of a scheduler that has
// bound one pod.
func checkEndpoints(t *testing.T, base string) {
	t.Helper()
	for path, want := range map[string]string{
		"/livez":   "ok",
		"/readyz":  "ok",
		"/metrics": "corral_kube_binds_total 1",
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %q, want 200 with %q", path, resp.StatusCode, body, want)
		}
	}
}

// syncWriter serialises writes from the scheduler's goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func TestKubeSchedulerHealthFlags(t *testing.T) {
	f, err := parseKubeSchedulerFlags([]string{"--leader-elect=false", "--notice-taints", "example.com/going, example.com/gone",
		"--fault-conditions=", "--spare-label", "pool=spare", "--node-fault-grace", "30s", "--move-off-cordoned", "--device-health=false"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.Health
	if !slices.Equal(h.NoticeTaints, []string{"example.com/going", "example.com/gone"}) || h.FaultConditions == nil || len(h.FaultConditions) != 0 ||
		h.SpareLabel != "pool=spare" || h.Grace != 30*time.Second || !slices.Equal(h.FaultTaints, kube.DefaultFaultTaints) ||
		!h.MoveOffCordoned || !h.IgnoreDeviceHealth {
		t.Errorf("health %+v", h)
	}
}

// --reservations 0 is none, which the core spells negative; the default
// is one, and a count passes as given.
func TestKubeSchedulerReservationsFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 1},
		{[]string{"--reservations", "0"}, -1},
		{[]string{"--reservations", "4"}, 4},
	} {
		f, err := parseKubeSchedulerFlags(append([]string{"--leader-elect=false"}, tc.args...), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := f.config()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Reservations != tc.want {
			t.Errorf("%v: Reservations %d, want %d", tc.args, cfg.Reservations, tc.want)
		}
	}
}

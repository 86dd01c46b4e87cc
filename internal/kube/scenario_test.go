package kube

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"go.yaml.in/yaml/v3"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// The core's seed scenarios on whole GPUs, topology, taints and
// time-sliced shares, replayed as nodes, pods and pod groups: corral on
// Kubernetes must place every job on the same nodes as the core does, and
// leave the same jobs pending for the same reasons. steps bounds the
// steps replayed (0: all): the later steps of half-gpu-pods ask for whole
// GPUs on time-sliced nodes, which the device plugin offers as shares
// only, and the later steps of inference-sharing ask for GPU memory
// fractions and MIG slices of a dynamic layout, which the device plugin
// does not offer.
var replayed = []struct {
	name  string
	steps int
}{{"allreduce-topology", 0}, {"two-large-gangs", 0}, {"gang-all-or-nothing", 0}, {"six-single-gpu-jobs", 0}, {"spot-taints", 0}, {"half-gpu-pods", 1}, {"inference-sharing", 1}, {"spread-inference", 0}}

type replayScenario struct {
	Fleet string `yaml:"fleet"`
	Steps []struct {
		Place   string `yaml:"place"`
		Release string `yaml:"release"`
	} `yaml:"steps"`
}

func TestSeedScenarios(t *testing.T) {
	for _, sc := range replayed {
		t.Run(sc.name, func(t *testing.T) {
			replay(t, filepath.Join("..", "gang", "testdata", "scenarios", sc.name+".yaml"), sc.steps)
		})
	}
}

func replay(t *testing.T, file string, steps int) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var sc replayScenario
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&sc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	f, err := fleet.Parse([]byte(sc.Fleet), file)
	if err != nil {
		t.Fatal(err)
	}
	core, err := gang.New(f)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	cfg := e.config()
	cfg.Levels = nil
	for _, l := range f.Levels {
		cfg.Levels = append(cfg.Levels, Level{Name: l, Labels: []string{"corral.test/" + l}})
	}
	cfg.NodeSelector = labels.SelectorFromSet(labels.Set{testLabel: e.ns})
	for i := range f.Nodes {
		e.nodeSpec(kubeTestNode(f, &f.Nodes[i]))
	}
	_, stop := e.start(cfg)
	created := map[string]bool{}
	for i, st := range sc.Steps {
		if steps > 0 && i == steps {
			break
		}
		if st.Release != "" {
			if err := core.Release(st.Release); err != nil {
				t.Fatal(err)
			}
			// A release is one change in the core: the scheduler is
			// stopped while the pods go, and a new one rebuilds its state.
			stop()
			e.deleteJob(st.Release)
			_, stop = e.start(cfg)
			continue
		}
		jobs, err := job.Parse([]byte(st.Place), file)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			want, unfit := core.Place(j)
			if !created[j.Name] {
				e.createJob(j)
				created[j.Name] = true
			}
			if unfit != nil {
				// pending with the core's own words
				e.waitUnschedulable(jobPods(j)[0], unfit.String())
				continue
			}
			got := e.waitBound(jobPods(j)...)
			var gotNodes, wantNodes []string
			for _, p := range jobPods(j) {
				gotNodes = append(gotNodes, got[p])
			}
			for _, task := range want.Tasks {
				wantNodes = append(wantNodes, task.NodeName)
			}
			slices.Sort(gotNodes)
			slices.Sort(wantNodes)
			if !slices.Equal(gotNodes, wantNodes) {
				t.Errorf("step %d: %s on %v, the core places it on %v", i+1, j.Name, gotNodes, wantNodes)
			}
		}
	}
}

// kubeTestNode is a fleet node as a kubelet and GPU feature discovery
// would show it, with its domains as labels and its taints as NoSchedule
// taints.
func kubeTestNode(f *fleet.Fleet, n *fleet.Node) kubetest.Node {
	l := map[string]string{}
	for i, level := range f.Levels {
		l["corral.test/"+level] = n.Domains[i]
	}
	var taints []corev1.Taint
	for _, t := range n.Taints {
		taints = append(taints, corev1.Taint{Key: t, Effect: corev1.TaintEffectNoSchedule})
	}
	kn := kubetest.Node{Name: n.Name, GPUs: n.GPUs, Product: n.GPUModel,
		CPU: fmt.Sprintf("%dm", n.CPUMilli), Memory: fmt.Sprintf("%dMi", n.MemoryMiB), Labels: l, Taints: taints}
	if n.TimeSlices > 1 { // the device plugin's time-slicing, renamed to shares
		l[LabelReplicas] = fmt.Sprint(n.TimeSlices)
		kn.Resources = map[string]string{string(ResourceGPU): "0", string(ResourceShared): fmt.Sprint(n.GPUs * n.TimeSlices)}
	}
	return kn
}

// jobPods names a job's pods: the job's name for a lone task, else
// job-group-index.
func jobPods(j *job.Job) []string {
	if isLone(j) {
		return []string{j.Name}
	}
	var out []string
	for g, grp := range j.Groups {
		for i := range grp.Count {
			out = append(out, fmt.Sprintf("%s-%d-%d", j.Name, g, i))
		}
	}
	return out
}

func isLone(j *job.Job) bool { return j.Tasks() == 1 && len(j.Topology) == 0 }

// createJob makes a job's pods, in a PodGroup unless it is a lone task.
func (e *env) createJob(j *job.Job) {
	e.t.Helper()
	if !isLone(j) {
		ann := map[string]string{}
		for _, c := range j.Topology {
			key := AnnotationPackPreferred
			switch {
			case c.Spread && c.Required:
				key = AnnotationSpread
			case c.Spread:
				key = AnnotationSpreadPreferred
			case c.Required:
				key = AnnotationPack
			}
			ann[key] = c.Level
			if c.Spread && c.MaxPerDomain > 0 {
				ann[AnnotationSpreadMax] = fmt.Sprint(c.MaxPerDomain)
			}
		}
		e.podGroup(j.Name, j.MinTasks(), ann)
	}
	names := jobPods(j)
	k := 0
	for _, grp := range j.Groups {
		for range grp.Count {
			req := corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(grp.Task.CPUMilli, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(grp.Task.MemoryMiB*mib, resource.BinarySI),
			}
			if grp.Task.Shares > 0 {
				req[ResourceShared] = *resource.NewQuantity(int64(grp.Task.Shares), resource.DecimalSI)
			} else {
				req[kubetest.ResourceGPU] = *resource.NewQuantity(int64(grp.Task.GPUs), resource.DecimalSI)
			}
			p := podWith(names[k], req)
			for _, t := range j.Tolerations {
				p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: t, Operator: corev1.TolerationOpExists})
			}
			if !isLone(j) {
				inGroup(p, j.Name)
			}
			e.create(p)
			k++
		}
	}
}

func (e *env) deleteJob(name string) {
	e.t.Helper()
	zero := int64(0)
	ctx := context.Background()
	list, err := e.c.Client.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Name == name || strings.HasPrefix(p.Name, name+"-") && p.Labels[LabelPodGroup] == name {
			if err := e.c.Client.CoreV1().Pods(e.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				e.t.Fatal(err)
			}
		}
	}
}

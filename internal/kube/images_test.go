package kube

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

func TestImageRef(t *testing.T) {
	for in, want := range map[string]string{
		"nginx":                                  "docker.io/library/nginx:latest",
		"nginx:1.25":                             "docker.io/library/nginx:1.25",
		"myrepo/train:latest":                    "docker.io/myrepo/train:latest",
		"docker.io/library/nginx:1.25":           "docker.io/library/nginx:1.25",
		"index.docker.io/myrepo/train":           "docker.io/myrepo/train:latest",
		"nvcr.io/nvidia/pytorch:25.05-py3":       "nvcr.io/nvidia/pytorch:25.05-py3",
		"localhost/train":                        "localhost/train:latest",
		"registry.local:5000/team/train":         "registry.local:5000/team/train:latest",
		"registry.local:5000/team/train:v2":      "registry.local:5000/team/train:v2",
		"nvcr.io/nvidia/pytorch@sha256:0123abcd": "nvcr.io/nvidia/pytorch@sha256:0123abcd",
		"  ":                                     "",
	} {
		if got := imageRef(in); got != want {
			t.Errorf("imageRef(%q) = %q; want %q", in, got, want)
		}
	}
}

// A node's images are known by every name the runtime lists, written as
// the pod's are.
func TestNodeAndPodImagesMeet(t *testing.T) {
	node := &corev1.Node{Status: corev1.NodeStatus{Images: []corev1.ContainerImage{
		{Names: []string{"docker.io/myrepo/train@sha256:aa", "docker.io/myrepo/train:latest"}, SizeBytes: 12 << 30},
		{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 300 << 10},
	}}}
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Image: "busybox"}},
		Containers:     []corev1.Container{{Image: "myrepo/train:latest"}, {Image: "myrepo/train"}},
	}}
	held := nodeImages(node)
	imgs := podImages([]*corev1.Pod{pod})
	if len(imgs) != 2 || imgs[0] != "docker.io/library/busybox:latest" || imgs[1] != "docker.io/myrepo/train:latest" {
		t.Fatalf("pod images %q", imgs)
	}
	if held[imgs[1]] != 12<<30 || held[imgs[0]] != 0 {
		t.Errorf("node holds %v; want the training image's 12 GiB and no busybox", held)
	}
}

// On the real API server, under the shipped ServiceAccount: a pod goes to
// the one empty node whose status lists its image (not the first empty
// node), and a gang of two 8-GPU pods to the two nodes holding its image,
// where without images it would take the first two empty nodes.
func TestPodsGoWhereTheirImagesAre(t *testing.T) {
	e := newEnv(t)
	held := func(names ...string) []corev1.ContainerImage {
		return []corev1.ContainerImage{{Names: names, SizeBytes: 18 << 30}}
	}
	e.node("img-a", 8, nil)
	e.nodeSpec(kubetest.Node{Name: "img-b", GPUs: 8, Product: "NVIDIA-H100-80GB-HBM3", GPUMemMiB: 81559, Images: held("docker.io/team/eval:v2")})
	e.nodeSpec(kubetest.Node{Name: "img-c", GPUs: 8, Product: "NVIDIA-H100-80GB-HBM3", GPUMemMiB: 81559,
		Images: held("docker.io/team/train@sha256:0123", "docker.io/team/train:v1")})
	e.nodeSpec(kubetest.Node{Name: "img-d", GPUs: 8, Product: "NVIDIA-H100-80GB-HBM3", GPUMemMiB: 81559, Images: held("docker.io/team/eval:v2")})
	e.start(e.config())

	single := pod("single", 1)
	single.Spec.Containers[0].Image = "team/train:v1"
	e.create(single)
	if got := e.waitBound("single")["single"]; got != "img-c" {
		t.Errorf("the pod is on %s; want img-c, the empty node holding team/train:v1", got)
	}
	e.podGroup("eval", 2, nil)
	for _, name := range []string{"eval-0", "eval-1"} {
		p := inGroup(pod(name, 8), "eval")
		p.Spec.Containers[0].Image = "team/eval:v2"
		e.create(p)
	}
	nodes := e.waitBound("eval-0", "eval-1")
	if got := []string{nodes["eval-0"], nodes["eval-1"]}; !(slices.Contains(got, "img-b") && slices.Contains(got, "img-d")) {
		t.Errorf("the gang is on %v; want img-b and img-d, which hold team/eval:v2", got)
	}
}

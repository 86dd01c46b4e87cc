package kubetest

import (
	"context"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestNodeIsReadyWithGPUs(t *testing.T) {
	c := Shared(t)
	c.CreateNode(t, Node{Name: "kubetest-n1", GPUs: 8, Product: "NVIDIA-H100-80GB-HBM3", GPUMemMiB: 81559})
	got, err := c.Client.CoreV1().Nodes().Get(context.Background(), "kubetest-n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Taints) != 0 {
		t.Errorf("taints %v, want none", got.Spec.Taints)
	}
	if q := got.Status.Allocatable[ResourceGPU]; q.Value() != 8 {
		t.Errorf("allocatable GPUs %s, want 8", q.String())
	}
	if got.Labels[LabelProduct] != "NVIDIA-H100-80GB-HBM3" || got.Labels[LabelCount] != "8" {
		t.Errorf("labels %v", got.Labels)
	}
}

func TestNamespaceHasDefaultServiceAccount(t *testing.T) {
	c := Shared(t)
	ns := c.Namespace(t)
	if _, err := c.Client.CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

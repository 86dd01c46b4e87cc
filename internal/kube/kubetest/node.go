package kubetest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
)

// GPU feature discovery and device-plugin names used on test nodes.
const (
	LabelProduct  = "nvidia.com/gpu.product"
	LabelCount    = "nvidia.com/gpu.count"
	LabelMemory   = "nvidia.com/gpu.memory" // MiB per GPU
	LabelReplicas = "nvidia.com/gpu.replicas"
	ResourceGPU   = corev1.ResourceName("nvidia.com/gpu")
)

// Node describes a test node. Zero fields take small defaults: 64 CPUs and
// 512 GiB of memory.
type Node struct {
	Name      string
	GPUs      int    // nvidia.com/gpu capacity and the gpu.count label
	Product   string // nvidia.com/gpu.product, for example "NVIDIA-H100-80GB-HBM3"
	GPUMemMiB int    // nvidia.com/gpu.memory
	CPU       string // "64"
	Memory    string // "512Gi"
	Labels    map[string]string
	// Annotations are set on the node as an admin or a cloud's node
	// controller sets them, for example corral.sh/gpu-price.
	Annotations map[string]string
	// Resources adds or overrides capacity, for example
	// {"nvidia.com/mig-1g.10gb": "7"}.
	Resources map[string]string
	Taints    []corev1.Taint
	// Images are what its status says the container runtime holds, as a
	// kubelet reports them.
	Images []corev1.ContainerImage
}

// CreateNode creates a Ready node with n's capacity and labels, as a kubelet
// and the NVIDIA device plugin would report it, and deletes it when t ends.
func (c *Cluster) CreateNode(t testing.TB, n Node) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	node, err := c.AddNode(ctx, n)
	if err != nil {
		t.Fatalf("node %s: %v", n.Name, err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = c.Client.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	return node
}

// AddNode creates a Ready node as CreateNode does, outside a test.
func (c *Cluster) AddNode(ctx context.Context, n Node) (*corev1.Node, error) {
	labels := map[string]string{"kubernetes.io/hostname": n.Name}
	if n.GPUs > 0 {
		labels[LabelCount] = strconv.Itoa(n.GPUs)
		labels[LabelProduct] = n.Product
		if n.GPUMemMiB > 0 {
			labels[LabelMemory] = strconv.Itoa(n.GPUMemMiB)
		}
	}
	for k, v := range n.Labels {
		labels[k] = v
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels, Annotations: n.Annotations}}
	created, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	// No node lifecycle controller runs: take off the not-ready taint the
	// API server puts on new nodes, and set the taints asked for.
	created.Spec.Taints = n.Taints
	if created, err = c.Client.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("taints: %w", err)
	}
	created.Status = nodeStatus(n)
	if created, err = c.Client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	return created, nil
}

func nodeStatus(n Node) corev1.NodeStatus {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(orDefault(n.CPU, "64")),
		corev1.ResourceMemory: resource.MustParse(orDefault(n.Memory, "512Gi")),
		corev1.ResourcePods:   resource.MustParse("256"),
	}
	if n.GPUs > 0 {
		res[ResourceGPU] = *resource.NewQuantity(int64(n.GPUs), resource.DecimalSI)
	}
	for k, v := range n.Resources {
		res[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	now := metav1.NewTime(time.Now())
	return corev1.NodeStatus{
		Capacity:    res,
		Allocatable: res.DeepCopy(),
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now,
		}},
		Images: n.Images,
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Namespace creates a namespace for t with its default ServiceAccount (no
// controller-manager makes it) and, when t ends, force-deletes its pods and
// the namespace.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	name = strings.Trim(name, "-") + "-" + rand.String(5)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("namespace %s: %v", name, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := c.Client.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("default service account in %s: %v", name, err)
	}
	t.Cleanup(func() { c.deleteNamespace(name) })
	return name
}

func (c *Cluster) deleteNamespace(name string) {
	ctx := context.Background()
	zero := int64(0)
	_ = c.Client.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	_ = c.Client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
}

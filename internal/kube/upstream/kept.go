package upstream

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
)

// keptCluster is the plugins' cluster kept from view to view, as
// kube-scheduler keeps its own: upstream's cache of NodeInfos, told what
// changed since the last view, and one snapshot it brings up to date by
// copying only the nodes whose NodeInfo changed. Building every NodeInfo
// afresh, each pod's requests and affinity parsed again, was most of a
// cycle's cost on a large cluster.
type keptCluster struct {
	ctx   context.Context // bounds the cache's metrics goroutine
	cache cache.Cache
	snap  *cache.Snapshot
	nodes map[string]*corev1.Node   // as last told to the cache
	pods  map[types.UID]*corev1.Pod // as last told to the cache
	order []fwk.NodeInfo            // the snapshot's nodes in name order
	named map[string]fwk.NodeInfo   // the same, by name
}

func newKeptCluster(ctx context.Context) *keptCluster {
	return &keptCluster{ctx: ctx, cache: cache.New(ctx, nil, false, false), snap: cache.NewEmptySnapshot(),
		nodes: map[string]*corev1.Node{}, pods: map[types.UID]*corev1.Pod{}}
}

// update brings the snapshot to nodes and the pods on them (pods on other
// nodes are left out): the pods changed, or, changed nil, every pod
// (all). Every pod is compared, too, when the set of nodes changed. Should
// upstream's cache find itself inconsistent, which a correct diff never
// makes it, it is built again from nothing.
func (k *keptCluster) update(nodes []*corev1.Node, changed []PodChange, all func() []*corev1.Pod) (*keptCluster, error) {
	logger := klog.FromContext(k.ctx)
	reordered := k.updateNodes(logger, nodes)
	var err error
	if changed == nil || reordered || k.order == nil {
		err = k.updatePods(logger, all())
	} else {
		err = k.applyPods(logger, changed)
	}
	if err != nil {
		return k.rebuilt(nodes, all(), err)
	}
	if err := k.cache.UpdateSnapshot(logger, k.snap); err != nil {
		return k.rebuilt(nodes, all(), err)
	}
	if reordered || k.order == nil {
		k.index()
	}
	return k, nil
}

// rebuilt is a new kept cluster of nodes and pods, after err.
func (k *keptCluster) rebuilt(nodes []*corev1.Node, pods []*corev1.Pod, err error) (*keptCluster, error) {
	fresh := newKeptCluster(k.ctx)
	if _, again := fresh.update(nodes, nil, func() []*corev1.Pod { return pods }); again != nil {
		return nil, fmt.Errorf("the plugins' cluster, built again after %v: %w", err, again)
	}
	return fresh, nil
}

// applyPods tells the cache of the pods changed, as updatePods does for
// every pod: those that left a node first, then those that came or
// changed, each in uid order.
func (k *keptCluster) applyPods(logger klog.Logger, changed []PodChange) error {
	slices.SortFunc(changed, func(a, b PodChange) int { return strings.Compare(string(a.UID), string(b.UID)) })
	for _, c := range changed {
		old, ok := k.pods[c.UID]
		if !ok || c.Pod != nil && c.Pod.Spec.NodeName == old.Spec.NodeName && k.nodes[c.Pod.Spec.NodeName] != nil {
			continue
		}
		if err := k.cache.RemovePod(logger, old); err != nil {
			return fmt.Errorf("pod %s/%s: %w", old.Namespace, old.Name, err)
		}
		delete(k.pods, c.UID)
	}
	for _, c := range changed {
		if c.Pod == nil || k.nodes[c.Pod.Spec.NodeName] == nil {
			continue // gone, or on a node not in the view
		}
		if err := k.tell(logger, c.Pod); err != nil {
			return err
		}
	}
	return nil
}

// updateNodes tells the cache which nodes came, changed and went; true
// when the set of nodes changed.
func (k *keptCluster) updateNodes(logger klog.Logger, nodes []*corev1.Node) bool {
	changed := false
	seen := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		seen[n.Name] = true
		old, ok := k.nodes[n.Name]
		switch {
		case !ok:
			k.cache.AddNode(logger, n)
			changed = true
		case !sameObject(old.ResourceVersion, n.ResourceVersion, old == n):
			k.cache.UpdateNode(logger, old, n)
		default:
			continue
		}
		k.nodes[n.Name] = n
	}
	for name, old := range k.nodes {
		if !seen[name] {
			_ = k.cache.RemoveNode(logger, old) // known to the cache: added above
			delete(k.nodes, name)
			changed = true
		}
	}
	return changed
}

// updatePods tells the cache which pods left the nodes, came to them and
// changed. Those that left go first: a pod that ended and one that took
// its host port on the same node meanwhile would otherwise leave the
// node's port marked free (upstream's NodeInfo counts a port once,
// whoever holds it). A pod whose node changed (a copy for a pod assumed
// bound elsewhere) leaves and comes again: upstream's cache refuses to
// move one.
func (k *keptCluster) updatePods(logger klog.Logger, pods []*corev1.Pod) error {
	now := make(map[types.UID]*corev1.Pod, len(pods))
	for _, p := range pods {
		if _, known := k.nodes[p.Spec.NodeName]; known {
			now[p.UID] = p
		}
	}
	for uid, old := range k.pods {
		if p, ok := now[uid]; ok && p.Spec.NodeName == old.Spec.NodeName {
			continue
		}
		if err := k.cache.RemovePod(logger, old); err != nil {
			return fmt.Errorf("pod %s/%s: %w", old.Namespace, old.Name, err)
		}
		delete(k.pods, uid)
	}
	for _, p := range pods {
		if now[p.UID] != p {
			continue // on a node not in the view
		}
		if err := k.tell(logger, p); err != nil {
			return err
		}
	}
	return nil
}

// tell tells the cache of p, on a node of the view: new, or changed.
func (k *keptCluster) tell(logger klog.Logger, p *corev1.Pod) error {
	old, ok := k.pods[p.UID]
	var err error
	switch {
	case !ok:
		err = k.cache.AddPod(logger, p)
	case !sameObject(old.ResourceVersion, p.ResourceVersion, old == p):
		err = k.cache.UpdatePod(logger, old, p)
	default:
		return nil
	}
	if err != nil {
		return fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	k.pods[p.UID] = p
	return nil
}

// sameObject reports whether an object is unchanged: the same pointer, or
// copies of one version (the API server's resourceVersion). Objects
// without a version are the same only as the same pointer.
func sameObject(oldVersion, newVersion string, samePointer bool) bool {
	return samePointer || oldVersion != "" && oldVersion == newVersion
}

// index lists the snapshot's nodes in name order. The snapshot keeps each
// node's NodeInfo at one address while the node stays, so the list holds
// until nodes come or go.
func (k *keptCluster) index() {
	k.order = k.order[:0]
	k.named = make(map[string]fwk.NodeInfo, len(k.nodes))
	for name := range k.nodes {
		if ni, err := k.snap.Get(name); err == nil {
			k.order = append(k.order, ni)
			k.named[name] = ni
		}
	}
	sort.Slice(k.order, func(a, b int) bool { return k.order[a].Node().Name < k.order[b].Node().Name })
}

package kube

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/corral-sched/corral/internal/sched"
)

// ProvisioningRequestResource is cluster-autoscaler's ProvisioningRequest:
// a request for capacity for a set of pods at once. corral makes one for
// a pod group that no set of the cluster's nodes could hold even empty,
// where the cluster serves the API.
var ProvisioningRequestResource = schema.GroupVersionResource{Group: "autoscaling.x-k8s.io", Version: "v1", Resource: "provisioningrequests"}

// ProvisioningClassAtomic asks the autoscaler to add the capacity of all
// pod sets at once, or none.
const ProvisioningClassAtomic = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"

// LabelProvisioningFor marks the ProvisioningRequests and PodTemplates
// corral made, with the pod group they are for.
const LabelProvisioningFor = "corral.sh/provisioning-for"

// provisionWant is a ProvisioningRequest to have: one pod set per distinct
// pod shape of the group.
type provisionWant struct {
	ns, name, group string
	sets            []podSet
}

type podSet struct {
	pod   *corev1.Pod // the shape's first pod
	count int
}

// provisioner creates and deletes ProvisioningRequests, and the
// PodTemplates they name, from a goroutine of its own.
type provisioner struct {
	client kubernetes.Interface
	dyn    dynamic.Interface
	log    *slog.Logger
	kick   chan struct{}

	mu      sync.Mutex
	want    map[string]provisionWant // by ns/name: groups no node set holds
	keep    map[string]bool          // ns/name of the groups still pending
	made    map[string]provisionWant // requests made, by this replica or read back
	listed  bool                     // those made before were read back
	changed bool
	asked   map[string]bool // ns/name of the requests there now, for note
}

func newProvisioner(client kubernetes.Interface, dyn dynamic.Interface, log *slog.Logger) *provisioner {
	return &provisioner{client: client, dyn: dyn, log: log, kick: make(chan struct{}, 1), made: map[string]provisionWant{}, asked: map[string]bool{}}
}

var dnsInvalid = regexp.MustCompile(`[^-a-z0-9]+`)

// provisionName is the request's name for a pod group.
func provisionName(group string) string {
	n := "corral-" + strings.Trim(dnsInvalid.ReplaceAllString(strings.ToLower(group), "-"), "-")
	return strings.TrimRight(n[:min(len(n), 240)], "-")
}

// submit takes a cycle's waiting units: each pod group that never fits
// should have a request; a request whose group no longer waits (started,
// or gone) is deleted.
func (p *provisioner) submit(rejects []rejection) {
	if p == nil {
		return
	}
	want, keep := map[string]provisionWant{}, map[string]bool{}
	for _, rj := range rejects {
		if len(rj.pods) == 0 {
			continue
		}
		g := GroupName(rj.pods[0])
		if g == "" {
			continue
		}
		ns := rj.pods[0].Namespace
		name := provisionName(g)
		keep[ns+"/"+name] = true
		if rj.code != sched.CodeNeverFits {
			continue
		}
		w := want[ns+"/"+name]
		w.ns, w.name, w.group = ns, name, g
		w.sets = addToSets(w.sets, rj.pods)
		want[ns+"/"+name] = w
	}
	p.mu.Lock()
	p.want, p.keep, p.changed = want, keep, true
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// addToSets counts pods into sets of one shape (the same container
// requests).
func addToSets(sets []podSet, pods []*corev1.Pod) []podSet {
	for _, pod := range pods {
		found := false
		for i := range sets {
			if sameShape(sets[i].pod, pod) {
				sets[i].count++
				found = true
				break
			}
		}
		if !found {
			sets = append(sets, podSet{pod: pod, count: 1})
		}
	}
	return sets
}

func sameShape(a, b *corev1.Pod) bool {
	d1, err1 := demand(a)
	d2, err2 := demand(b)
	return err1 == nil && err2 == nil && sameDemand(d1, d2)
}

// run makes and deletes requests until ctx ends.
func (p *provisioner) run(ctx context.Context) {
	if p == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
			p.reconcile(ctx)
		}
	}
}

func (p *provisioner) reconcile(ctx context.Context) {
	if !p.listed {
		if err := p.readBack(ctx); err != nil {
			p.log.Warn("provisioning requests", "err", err)
			return
		}
		p.listed = true
	}
	p.mu.Lock()
	want, keep := p.want, p.keep
	p.mu.Unlock()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := p.made[k]; ok {
			continue
		}
		if err := p.create(ctx, want[k]); err != nil {
			if ctx.Err() == nil {
				p.log.Warn("provisioning request", "group", want[k].ns+"/"+want[k].group, "err", err)
			}
			continue
		}
		p.made[k] = want[k]
		p.setAsked(k, true)
	}
	for k, w := range p.made {
		if keep[k] {
			continue
		}
		if err := p.delete(ctx, w); err != nil {
			if ctx.Err() == nil {
				p.log.Warn("provisioning request", "group", w.ns+"/"+w.group, "err", err)
			}
			continue
		}
		delete(p.made, k)
		p.setAsked(k, false)
	}
}

func (p *provisioner) setAsked(k string, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.asked[k] = true
	} else {
		delete(p.asked, k)
	}
}

// note adds to the reason of each waiting pod group that has a
// ProvisioningRequest that it has one.
func (p *provisioner) note(rejects []rejection) []rejection {
	if p == nil {
		return rejects
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]rejection, len(rejects))
	for i, rj := range rejects {
		out[i] = rj
		if len(rj.pods) == 0 || GroupName(rj.pods[0]) == "" {
			continue
		}
		k := rj.pods[0].Namespace + "/" + provisionName(GroupName(rj.pods[0]))
		if p.asked[k] {
			out[i].message += "; capacity asked of the cluster autoscaler: ProvisioningRequest " + k
		}
	}
	return out
}

// create makes the PodTemplates of the request's pod sets, then the
// request; either may exist already (made by a previous leader).
func (p *provisioner) create(ctx context.Context, w provisionWant) error {
	labels := map[string]string{LabelProvisioningFor: w.name}
	var sets []any
	for i, s := range w.sets {
		tpl := &corev1.PodTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", w.name, i), Namespace: w.ns, Labels: labels},
			Template:   corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: s.pod.Labels}, Spec: templateSpec(s.pod)},
		}
		_, err := p.client.CoreV1().PodTemplates(w.ns).Create(ctx, tpl, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("pod template %s/%s: %w", w.ns, tpl.Name, err)
		}
		sets = append(sets, map[string]any{"count": int64(s.count), "podTemplateRef": map[string]any{"name": tpl.Name}})
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": ProvisioningRequestResource.GroupVersion().String(), "kind": "ProvisioningRequest",
		"metadata": map[string]any{"name": w.name, "namespace": w.ns, "labels": map[string]any{LabelProvisioningFor: w.name},
			"annotations": map[string]any{"corral.sh/pod-group": w.group}},
		"spec": map[string]any{"provisioningClassName": ProvisioningClassAtomic, "podSets": sets},
	}}
	_, err := p.dyn.Resource(ProvisioningRequestResource).Namespace(w.ns).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("provisioning request %s/%s: %w", w.ns, w.name, err)
	}
	p.log.Info("provisioning request made: no set of nodes holds the pod group", "request", w.ns+"/"+w.name, "group", w.group)
	return nil
}

// templateSpec is the pod's spec as an autoscaler should size nodes for
// it: not bound, not gated.
func templateSpec(pod *corev1.Pod) corev1.PodSpec {
	spec := *pod.Spec.DeepCopy()
	spec.NodeName, spec.SchedulingGates = "", nil
	return spec
}

// delete removes a request and its PodTemplates.
func (p *provisioner) delete(ctx context.Context, w provisionWant) error {
	err := p.dyn.Resource(ProvisioningRequestResource).Namespace(w.ns).Delete(ctx, w.name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("provisioning request %s/%s: %w", w.ns, w.name, err)
	}
	for i := range w.sets {
		name := fmt.Sprintf("%s-%d", w.name, i)
		if err := p.client.CoreV1().PodTemplates(w.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("pod template %s/%s: %w", w.ns, name, err)
		}
	}
	return nil
}

// newProvisionerIfServed returns a provisioner where the API server serves
// ProvisioningRequests, else nil.
func (s *Scheduler) newProvisionerIfServed() *provisioner {
	r := ProvisioningRequestResource
	if s.dyn == nil || servedVersion(s.client.Discovery(), r.Group, r.Resource, []string{r.Version}) == "" {
		return nil
	}
	s.log.Info("the cluster serves ProvisioningRequests: pod groups no set of nodes holds will ask for capacity", "resource", r.GroupResource().String()+"/"+r.Version)
	return newProvisioner(s.client, s.dyn, s.log)
}

// readBack takes the requests corral made before (another leader, an
// earlier run) as made, so that they are deleted when their groups no
// longer wait.
func (p *provisioner) readBack(ctx context.Context) error {
	list, err := p.dyn.Resource(ProvisioningRequestResource).List(ctx, metav1.ListOptions{LabelSelector: LabelProvisioningFor})
	if err != nil {
		return fmt.Errorf("listing provisioning requests: %w", err)
	}
	for _, obj := range list.Items {
		sets, _, _ := unstructured.NestedSlice(obj.Object, "spec", "podSets")
		w := provisionWant{ns: obj.GetNamespace(), name: obj.GetName(), group: obj.GetAnnotations()["corral.sh/pod-group"], sets: make([]podSet, len(sets))}
		p.made[w.ns+"/"+w.name] = w
		p.setAsked(w.ns+"/"+w.name, true)
	}
	return nil
}

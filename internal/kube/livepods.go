package kube

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// podFeed collects the pods the informer saw change between two cycles,
// as kube-scheduler's cache is fed: its event handlers put each object
// in as it comes, and the cycle takes them out. Until the first take, or
// after relist, the cycle lists every pod instead.
type podFeed struct {
	mu      sync.Mutex
	changed map[types.UID]*corev1.Pod // the last object seen; nil: deleted
	relist  bool
}

func newPodFeed() *podFeed {
	return &podFeed{changed: map[types.UID]*corev1.Pod{}, relist: true}
}

// saw records the pod the informer added or updated.
func (f *podFeed) saw(obj any) {
	if p, ok := obj.(*corev1.Pod); ok {
		f.mu.Lock()
		f.changed[p.UID] = p
		f.mu.Unlock()
	}
}

// deleted records the pod the informer deleted.
func (f *podFeed) deleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if p, ok := obj.(*corev1.Pod); ok {
		f.mu.Lock()
		f.changed[p.UID] = nil
		f.mu.Unlock()
	}
}

// take hands over the pods changed since the last take; relist says the
// cycle must list every pod instead.
func (f *podFeed) take() (changed map[types.UID]*corev1.Pod, relist bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	changed, relist = f.changed, f.relist
	f.changed, f.relist = map[types.UID]*corev1.Pod{}, false
	return changed, relist
}

// livePods is every pod as the informer last showed it, kept by the
// cycle from the feed, and what the cycle asks of them without looking
// at every pod: the pods of pod groups (their status counts them), those
// in a Queue (its status counts them), those
// that may use DRA (described afresh each cycle), those a device reports
// Unhealthy, and the pods of each unit. Only the cycle's goroutine uses
// it.
type livePods struct {
	raw     map[types.UID]*corev1.Pod
	grouped map[types.UID]bool
	queued  map[types.UID]bool
	claimed map[types.UID]bool // with resource claims, or extended resources other than the device plugin's
	gpus    map[types.UID]bool // asking nvidia.com/gpu: DRA's when a DeviceClass stands for it (KEP-5004)
	sick    map[types.UID]bool // bound, not ended, a device reported Unhealthy
	units   map[string]int     // pods by unit name
	// gone are the pods deleted since the cycle last asked (takeGone).
	gone []types.UID
}

func newLivePods() *livePods {
	return &livePods{raw: map[types.UID]*corev1.Pod{}, grouped: map[types.UID]bool{}, queued: map[types.UID]bool{}, claimed: map[types.UID]bool{},
		gpus: map[types.UID]bool{}, sick: map[types.UID]bool{}, units: map[string]int{}}
}

// apply takes in the pods changed, and returns their uids.
func (l *livePods) apply(changed map[types.UID]*corev1.Pod) []types.UID {
	out := make([]types.UID, 0, len(changed))
	for uid, p := range changed {
		l.set(uid, p)
		out = append(out, uid)
	}
	return out
}

// reset makes the pods exactly those listed, and returns every uid that
// was or is there.
func (l *livePods) reset(pods []*corev1.Pod) []types.UID {
	changed := make(map[types.UID]*corev1.Pod, len(pods)+len(l.raw))
	for uid := range l.raw {
		changed[uid] = nil
	}
	for _, p := range pods {
		changed[p.UID] = p
	}
	return l.apply(changed)
}

// set records the pod of uid as p; nil: gone.
func (l *livePods) set(uid types.UID, p *corev1.Pod) {
	if old := l.raw[uid]; old != nil {
		name := unitName(old)
		if n := l.units[name] - 1; n > 0 {
			l.units[name] = n
		} else {
			delete(l.units, name)
		}
	}
	delete(l.grouped, uid)
	delete(l.queued, uid)
	delete(l.claimed, uid)
	delete(l.gpus, uid)
	delete(l.sick, uid)
	if p == nil {
		if _, was := l.raw[uid]; was {
			delete(l.raw, uid)
			l.gone = append(l.gone, uid)
		}
		return
	}
	l.raw[uid] = p
	l.units[unitName(p)]++
	if GroupName(p) != "" {
		l.grouped[uid] = true
	}
	if p.Labels[LabelQueue] != "" {
		l.queued[uid] = true
	}
	claims, gpus := mayUseDRA(p)
	if claims {
		l.claimed[uid] = true
	}
	if gpus {
		l.gpus[uid] = true
	}
	if p.Spec.NodeName != "" && !terminal(p) && unhealthyDevice(p) != "" {
		l.sick[uid] = true
	}
}

// takeGone hands over the pods deleted since the last call.
func (l *livePods) takeGone() []types.UID {
	out := l.gone
	l.gone = nil
	return out
}

// pods is the pods of uids that are there.
func (l *livePods) pods(uids map[types.UID]bool) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(uids))
	for uid := range uids {
		if p := l.raw[uid]; p != nil {
			out = append(out, p)
		}
	}
	return out
}

// mayUseDRA says whether DRA may describe the pod (draListers.asGPUPods):
// it has resource claims or asks for an extended resource other than the
// device plugin's (claims), or asks for nvidia.com/gpu, which a
// DeviceClass may stand for (gpus).
func mayUseDRA(p *corev1.Pod) (claims, gpus bool) {
	claims = len(p.Spec.ResourceClaims) > 0 || len(p.Status.ResourceClaimStatuses) > 0 || p.Status.ExtendedResourceClaimStatus != nil
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} { // no copy: every changed pod comes here
		for i := range cs {
			for name := range cs[i].Resources.Requests {
				switch {
				case name == ResourceGPU:
					gpus = true
				case strings.Contains(string(name), "/") && !strings.HasPrefix(string(name), "nvidia.com/"):
					claims = true
				}
			}
		}
	}
	return claims, gpus
}

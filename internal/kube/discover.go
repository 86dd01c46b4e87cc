package kube

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Custom resources come and go with their CRDs: corral reads the API
// server's discovery as it starts and again every DiscoveryInterval, starts
// an informer for a resource that appeared (and waits for its cache before
// a cycle reads it) and stops the one of a resource that went away. A
// cycle takes the listers as they are when it starts (Scheduler.useLive).

// watchedResource is a custom resource corral reads where it is served.
type watchedResource struct {
	key             string // a group kind, or keyQueues
	group, resource string
	versions        []string // most preferred first
	own             bool     // corral's own CRD (deploy/crds): its absence is a warning
}

const keyQueues = "queues"

// watchedResources are the custom resources corral reads.
var watchedResources = []watchedResource{
	{key: KindCoscheduling, group: PodGroupResource.Group, resource: PodGroupResource.Resource, versions: []string{PodGroupResource.Version}, own: true},
	{key: KindNative, group: NativePodGroupResource.Group, resource: NativePodGroupResource.Resource, versions: NativePodGroupVersions},
	{key: KindVolcano, group: VolcanoPodGroupResource.Group, resource: VolcanoPodGroupResource.Resource, versions: []string{VolcanoPodGroupResource.Version}},
	{key: KindKAI, group: KAIPodGroupResource.Group, resource: KAIPodGroupResource.Resource, versions: []string{KAIPodGroupResource.Version}},
	{key: KindJobSet, group: JobSetResource.Group, resource: JobSetResource.Resource, versions: []string{JobSetResource.Version}},
	{key: keyQueues, group: QueueResource.Group, resource: QueueResource.Resource, versions: []string{QueueResource.Version}, own: true},
}

// describe names the resource and the versions read, for logs and the
// reason a pod waits with.
func (w watchedResource) describe() string {
	return w.resource + "." + w.group + " (" + strings.Join(w.versions, " or ") + ")"
}

// liveInformer is the informer of one served resource.
type liveInformer struct {
	gvr    schema.GroupVersionResource
	inf    informers.GenericInformer
	stop   context.CancelFunc // nil until started
	synced bool
}

// liveResources keeps an informer for each watched resource the API
// server serves now.
type liveResources struct {
	dyn     dynamic.Interface
	disc    discovery.DiscoveryInterface
	handler cache.ResourceEventHandler
	log     *slog.Logger
	changed func() // called when a resource appeared or went away

	mu sync.Mutex
	on map[string]*liveInformer // by watchedResource.key
}

func newLiveResources(dyn dynamic.Interface, disc discovery.DiscoveryInterface, h cache.ResourceEventHandler, log *slog.Logger, changed func()) *liveResources {
	l := &liveResources{dyn: dyn, disc: disc, handler: h, log: log, changed: changed, on: map[string]*liveInformer{}}
	for _, w := range watchedResources {
		if v := servedVersion(disc, w.group, w.resource, w.versions); v != "" {
			l.on[w.key] = l.newInformer(w, v)
		} else {
			l.reportAbsent(w)
		}
	}
	return l
}

func (l *liveResources) newInformer(w watchedResource, version string) *liveInformer {
	gvr := schema.GroupVersionResource{Group: w.group, Version: version, Resource: w.resource}
	l.log.Info("reading custom resources", "resource", w.resource+"."+w.group+"/"+version)
	inf := dynamicinformer.NewFilteredDynamicInformer(l.dyn, gvr, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil)
	_, _ = inf.Informer().AddEventHandler(l.handler)
	return &liveInformer{gvr: gvr, inf: inf}
}

func (l *liveResources) reportAbsent(w watchedResource) {
	if w.own {
		l.log.Warn("custom resource not served; install its CRD from deploy/crds", "resource", w.describe())
		return
	}
	l.log.Info("custom resource not served; read as soon as its CRD is installed", "resource", w.describe())
}

// start runs the informers made so far and waits for their caches; they
// stop when ctx ends.
func (l *liveResources) start(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, li := range l.on {
		if !li.runUntilSynced(ctx, ctx) {
			return fmt.Errorf("cache of %v (%s) did not sync", li.gvr, key)
		}
	}
	return nil
}

// runUntilSynced starts li's informer, stopped when life ends, and waits
// until its cache is synced or wait ends.
func (li *liveInformer) runUntilSynced(life, wait context.Context) bool {
	if li.stop != nil {
		return li.synced
	}
	ctx, cancel := context.WithCancel(life)
	li.stop = cancel
	go li.inf.Informer().Run(ctx.Done())
	li.synced = cache.WaitForCacheSync(wait.Done(), li.inf.Informer().HasSynced)
	return li.synced
}

// run reads discovery every period until ctx ends.
func (l *liveResources) run(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if l.refresh(ctx, period) {
				l.changed()
			}
		}
	}
}

// refresh starts the informers of the resources served now and not read,
// each synced before a cycle sees it, and stops those no longer served. It
// reports whether anything changed.
func (l *liveResources) refresh(ctx context.Context, syncWait time.Duration) bool {
	changed := false
	for _, w := range watchedResources {
		v := servedVersion(l.disc, w.group, w.resource, w.versions)
		l.mu.Lock()
		cur := l.on[w.key]
		l.mu.Unlock()
		if cur != nil && cur.gvr.Version == v {
			continue
		}
		if cur != nil {
			cur.stop()
			l.log.Info("custom resource no longer served; its informer is stopped", "resource", cur.gvr.String())
		}
		var next *liveInformer
		if v != "" {
			next = l.newInformer(w, v)
			wait, cancel := context.WithTimeout(ctx, max(syncWait, 10*time.Second))
			synced := next.runUntilSynced(ctx, wait)
			cancel()
			if !synced {
				next.stop() // tried again next time
				l.log.Warn("custom resource served, but its cache did not sync", "resource", next.gvr.String())
				next = nil
			}
		}
		l.mu.Lock()
		if next == nil {
			delete(l.on, w.key)
		} else {
			l.on[w.key] = next
		}
		l.mu.Unlock()
		changed = changed || cur != nil || next != nil
	}
	return changed
}

// served are the listers and versions of the resources read now, by key.
func (l *liveResources) served() map[string]servedResource {
	out := map[string]servedResource{}
	if l == nil {
		return out
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, li := range l.on {
		if li.synced {
			out[key] = servedResource{gvr: li.gvr, lister: li.inf.Lister()}
		}
	}
	return out
}

// lister is the lister of the resource of key read now, or nil; safe
// from any goroutine (the pod handlers read Queues with it).
func (l *liveResources) lister(key string) cache.GenericLister {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if li := l.on[key]; li != nil && li.synced {
		return li.inf.Lister()
	}
	return nil
}

// servedResource is a resource read now and its lister.
type servedResource struct {
	gvr    schema.GroupVersionResource
	lister cache.GenericLister
}

// useLive points the cycle's listers at the resources read now: a
// resource that appeared since the last cycle is read from this one on,
// one that went away no longer. Queues, which pod handlers read too, are
// read through liveResources.lister instead.
func (s *Scheduler) useLive() {
	on := s.crds.served()
	s.groups = on[KindCoscheduling].lister
	s.native, s.nativeRes = on[KindNative].lister, on[KindNative].gvr
	s.more.volcano, s.more.kai, s.more.jobsets = on[KindVolcano].lister, on[KindKAI].lister, on[KindJobSet].lister
	s.unserved = map[string]bool{}
	for _, w := range watchedResources {
		if _, ok := on[w.key]; !ok {
			s.unserved[w.key] = true
		}
	}
}

// notServed says why a pod of a group kind whose resource the API server
// does not serve waits, or is "" where it is served (or needs no CRD).
func (s *Scheduler) notServed(kind string) string {
	if !s.unserved[kind] {
		return ""
	}
	for _, w := range watchedResources {
		if w.key == kind {
			return fmt.Sprintf("the API server does not serve %s: its CRD is not installed; corral reads them within %s of it being installed",
				w.describe(), s.cfg.DiscoveryInterval)
		}
	}
	return ""
}

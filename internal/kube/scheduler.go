package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/corral-sched/corral/internal/kube/upstream"
	"github.com/corral-sched/corral/internal/sched"
)

// Scheduler places pods with corral's core. Create it with New and run it
// with Run, or RunElected when several replicas run.
type Scheduler struct {
	cfg     Config
	quota   sched.Ledger // the queues' quota book, kept across cycles for fair share
	client  kubernetes.Interface
	dyn     dynamic.Interface // nil: no custom resources
	log     *slog.Logger
	factory informers.SharedInformerFactory
	crds    *liveResources // the custom resources served now; nil without a dynamic client
	nodes   listersv1.NodeLister
	pods    listersv1.PodLister
	groups  cache.GenericLister // nil when the PodGroup CRD is not served
	native  cache.GenericLister // Kubernetes' own PodGroups; nil when not served
	more    groupListers        // other schedulers' groups, Jobs and JobSets
	// unserved are the keys of watchedResources not served as the cycle
	// started (useLive sets these listers).
	unserved map[string]bool
	// nativeRes is the version of Kubernetes' own PodGroup read; status
	// keeps PodGroup and Queue status current.
	nativeRes schema.GroupVersionResource
	status    *statusWriter
	// ownedGroups are the pod groups whose status this scheduler writes
	// (only the cycle's goroutine uses them).
	ownedGroups map[string]bool
	prov        *provisioner // nil where ProvisioningRequests are not served
	kick        chan struct{}
	// upstream is Kubernetes' scheduler framework whose filter plugins say
	// where each pod may run; built by Start.
	upstream *upstream.Framework
	dra      draListers  // NVIDIA's DRA GPUs, read as GPUs; set by Start
	kept     keptCluster // the fleet and bound pods from the last cycle (only the cycle's goroutine uses it)
	// feed is the pods the informer saw change since the last cycle;
	// podsNow, classes and touched are what the cycle keeps of them
	// (livepods.go: only the cycle's goroutine uses these three).
	feed    *podFeed
	podsNow *livePods
	classes *podClasses
	touched map[types.UID]bool // assumed or stopping last cycle: classed again in the next
	sigs    signatures         // the pending pods' filter signatures from the last cycle (the cycle's goroutine too)
	// bindAsync: single pods are bound in the background (bindAll); set
	// by the scheduling loop. binding is closed when that batch is done
	// (nil: none runs). Only the cycle's goroutine uses them.
	bindAsync bool
	binding   chan struct{}
	n         counters
	ledger    *ledger
	spent     budgetLog // the ended pods' GPU use, for the queues' budgets
	metrics   *metrics
	reports   *reporter
	leading   atomic.Bool  // this replica schedules now
	synced    atomic.Bool  // the informers' caches are synced
	lastEnd   atomic.Int64 // when the last cycle ended, in Unix nanoseconds

	// events records events; set by Start. notes are the node reports
	// made, by node (only the cycle's goroutine uses them).
	events record.EventRecorder
	notes  map[string]string

	mu      sync.Mutex
	assumed map[string]string // pod uid -> node, bound here but not yet seen bound
	// inferredUnsettled: an inferred gang's placement record may be left
	// in the units' memory (read when leading starts, intent.go).
	inferredUnsettled atomic.Bool
	// boundAt is when this replica bound each pod that is still there: the
	// time of the cycle that placed it, which a running unit's lost work
	// is measured from (boundTime).
	boundAt map[types.UID]time.Time
	// units is the core's memory of the units still there: how often
	// each was preempted, until when it may not borrow, and whether pods
	// were evicted for it (a unit is a pod group, or a pod by name: a bare
	// pod its controller creates again under a new name starts afresh).
	// It is kept in the API server (memstore.go), so that a new leader
	// continues it.
	units      *sched.Memory
	unitsStore *memoryStore // nil: kept in this replica only
	// moved are the times of the moves in the last hour (Config.Defrag),
	// oldest first, this replica's and those a former leader kept
	// (defragmoves.go); only the cycle's goroutine uses them.
	// movedChanged says the cycle moved pods since they were last written.
	moved        []time.Time
	movedChanged bool
	// learnedRenewed is the renewal of the learned mix last written to
	// the unit memory ConfigMap (learned.go).
	learnedRenewed int
	// refusals are where the filter plugins refused pending pods the core
	// had placed (refusals.go).
	refusals map[types.UID]refusal

	// handled are the pods stopped or moved for a fault (faults.go);
	// beforeBind, when set, runs before each binding (tests stop a
	// binder midway with it).
	handled    map[types.UID]bool
	beforeBind func(b binding) error
}

// New builds a scheduler. dyn may be nil, and is unused when the API server
// does not serve PodGroups: pods of a pod group then stay pending.
func New(client kubernetes.Interface, dyn dynamic.Interface, cfg Config, log *slog.Logger) *Scheduler {
	cfg = cfg.withDefaults()
	if log == nil {
		log = slog.Default()
	}
	s := &Scheduler{cfg: cfg, client: client, dyn: dyn, log: log, kick: make(chan struct{}, 1), assumed: map[string]string{}, boundAt: map[types.UID]time.Time{}, units: sched.NewMemory(), refusals: map[types.UID]refusal{}, notes: map[string]string{}, handled: map[types.UID]bool{},
		feed: newPodFeed(), podsNow: newLivePods(), classes: newPodClasses(cfg.SchedulerName)}
	s.ledger = newLedger(cfg.Accounting, cfg.Now)
	s.ledger.store = s.accountingStore()
	if st, err := newMemoryStore(client, cfg.UnitMemoryConfigMap); err != nil {
		log.Error("unit memory", "err", err)
	} else {
		s.unitsStore = st
		s.inferredUnsettled.Store(st != nil)
	}
	s.metrics = newMetrics(&s.n, &s.leading)
	s.reports = newReporter(client, &s.n, log)
	s.status = newStatusWriter(dyn, log)
	s.factory = informers.NewSharedInformerFactory(client, 0)
	s.nodes = s.factory.Core().V1().Nodes().Lister()
	s.pods = s.factory.Core().V1().Pods().Lister()
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.wake() },
		UpdateFunc: func(any, any) { s.wake() },
		DeleteFunc: func(any) { s.wake() },
	}
	_, _ = s.factory.Core().V1().Nodes().Informer().AddEventHandler(handler)
	_, _ = s.factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.feed.saw(obj); s.wake() },
		UpdateFunc: func(old, cur any) { s.feed.saw(cur); s.podUpdated(old, cur); s.wake() },
		DeleteFunc: func(obj any) { s.feed.deleted(obj); s.podDeleted(obj); s.wake() },
	})
	if dyn != nil {
		s.crds = newLiveResources(dyn, client.Discovery(), handler, log, s.wake)
		s.prov = s.newProvisionerIfServed()
	}
	s.more = s.newGroupListers(handler)
	return s
}

// Stats returns the counts so far.
func (s *Scheduler) Stats() Stats { return s.n.stats() }

func (s *Scheduler) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Start starts the informers and the event writer, and waits for the
// caches. Both stop when ctx ends.
func (s *Scheduler) Start(ctx context.Context) error {
	events := s.cfg.Events
	if events == nil {
		events = s.client
	}
	s.events = newEventWriter(ctx, events, s.cfg.SchedulerName, s.log, time.Now)
	fw, err := upstream.New(ctx, s.client, s.factory, s.cfg.SchedulerName)
	if err != nil {
		return err
	}
	s.upstream = fw
	res := s.factory.Resource().V1()
	s.dra = draListers{slices: res.ResourceSlices().Lister(), claims: res.ResourceClaims().Lister(), classes: res.DeviceClasses().Lister(),
		classFor: fw.ClassFor, gpuDrivers: s.cfg.draGPUDrivers(), compiled: &classCache{}}
	s.factory.Start(ctx.Done())
	for typ, ok := range s.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("cache of %v did not sync", typ)
		}
	}
	if s.crds != nil {
		if err := s.crds.start(ctx); err != nil {
			return err
		}
		go s.crds.run(ctx, s.cfg.DiscoveryInterval)
	}
	s.useLive()
	s.synced.Store(true)
	return nil
}

// Run starts the informers and schedules until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	return s.loop(ctx)
}

// loop runs a cycle whenever the cluster changes, and at least every
// Interval.
func (s *Scheduler) loop(ctx context.Context) error {
	s.lastEnd.Store(time.Now().UnixNano())
	defer s.continueAccounting(ctx)()
	s.restoreUnits(ctx)
	s.inferredUnsettled.Store(s.unitsStore != nil)
	s.leading.Store(true)
	defer s.leading.Store(false)
	s.bindAsync = true
	defer func() { s.waitBinds(); s.bindAsync = false }()
	reporting := make(chan struct{})
	go func() { defer close(reporting); s.reports.run(ctx, s.events) }()
	defer func() { <-reporting }()
	statusing := make(chan struct{})
	go func() { defer close(statusing); s.status.run(ctx) }()
	defer func() { <-statusing }()
	provisioning := make(chan struct{})
	go func() { defer close(provisioning); s.prov.run(ctx) }()
	defer func() { <-provisioning }()
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	for {
		if err := s.Cycle(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Error("scheduling cycle", "err", err)
		}
		s.lastEnd.Store(time.Now().UnixNano())
		select {
		case <-ctx.Done():
			return nil
		case <-s.kick:
			// let a burst of changes settle into one cycle
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(20 * time.Millisecond):
			}
		case <-tick.C:
		}
	}
}

// Cycle runs one scheduling cycle over the informer cache:
//  1. take a snapshot: the fleet from the nodes, bound pods in place;
//  2. group pending pods into units, in priority order;
//  3. decide every unit with the core, preempting for those that do not fit;
//  4. evict what preemption chose;
//  5. bind what was placed, all pods of a unit in this cycle;
//  6. hand why the rest waits to the reporter, which writes what changed.
//
// Before these, it finishes or undoes the gangs whose binding was cut
// short (intent.go), and stops or moves the work on failed nodes
// (faults.go).
//
// Pods with scheduling gates are not pending: they are never placed and
// hold nothing.
func (s *Scheduler) Cycle(ctx context.Context) error {
	defer s.persistUnits(ctx)
	defer s.persistLearned(ctx)
	defer s.persistMoves(ctx)
	s.useLive()
	changed, err := s.refreshPods()
	if err != nil {
		return err
	}
	s.recoverIntents(ctx)
	s.handleFaults(ctx)
	snap, err := s.snapshot(ctx, changed)
	if err != nil {
		return err
	}
	s.reportNodes(snap)
	if len(snap.pending) == 0 {
		s.reports.submit(nil)
		s.prov.submit(nil)
		s.metrics.setPending(nil, len(snap.gated))
		s.metrics.setQueues(s.quota.Use(), nil)
		return nil
	}
	start := time.Now()
	groups := s.podGroups(snap.pending)
	s.markUnserved(snap.pending, groups)
	units := s.keepPlaces(buildUnits(snap.pending, groups, snap.members))
	snap.ledger, snap.now = &s.quota, s.cfg.Now()
	snap.budgets = budgetsOf(snap.queues)
	snap.spent = s.spent.spent(snap.budgets, snap.now, snap.nodePrice)
	d := decide(snap, units, !s.cfg.NoPreemption)
	d.confirm(ctx)
	s.rememberRefusals(d.refusals)
	s.reserved(d.reserved)
	s.metrics.cycle.Observe(time.Since(start).Seconds())
	s.log.Debug("cycle", "nodes", snap.nodes, "pending", len(snap.pending), "gated", len(snap.gated), "units", len(units),
		"binds", len(d.binds), "unplaced", len(d.rejects), "preemptions", len(d.preempts), "decided_in", time.Since(start))
	s.evictAll(ctx, snap, d.preempts)
	s.bindAll(ctx, snap, units, d.binds)
	s.reports.submit(s.prov.note(d.rejects))
	s.prov.submit(d.rejects)
	s.metrics.setPending(d.rejects, len(snap.gated))
	s.metrics.setQueues(s.quota.Use(), d.rejects)
	return nil
}

// refreshPods takes in the pods the informer saw change since the last
// cycle (every pod, listed, at the first), and returns their uids.
func (s *Scheduler) refreshPods() ([]types.UID, error) {
	changed, relist := s.feed.take()
	if !relist {
		return s.podsNow.apply(changed), nil
	}
	pods, err := s.pods.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	return s.podsNow.reset(pods), nil
}

// snapshot takes the cycle's snapshot from the informer cache: the nodes
// as listed, the pods as classed from the last cycle, the pods changed
// since classed again (livepods.go).
func (s *Scheduler) snapshot(ctx context.Context, changed []types.UID) (*snapshot, error) {
	nodes, err := s.nodes.List(s.cfg.NodeSelector)
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	more, err := s.refreshPods() // what recovering gangs and handling faults changed just now
	if err != nil {
		return nil, err
	}
	changed = append(changed, more...)
	// The plugins see the nodes as they are: a node whose GPUs only DRA
	// publishes has no nvidia.com/gpu for them, so the DynamicResources
	// plugin allocates what a DeviceClass stands for there (KEP-5004).
	asTheyAre := nodes
	describe := func(pods []*corev1.Pod) []*corev1.Pod { return pods }
	if s.dra.slices != nil { // DRA drivers' GPUs are GPUs to the core (dra.go)
		nodes, describe = s.dra.describer(nodes)
	}
	mem := s.recall()
	queues := s.queueSpecs()
	s.status.submit(s.statusPatches(s.podsNow.pods(s.podsNow.grouped), s.podsNow.pods(s.podsNow.queued), mem.assumed, queues))
	s.classify(changed, describe, mem.assumed)
	mem.hints = s.reserveHints()
	filter := func(classes *podClasses, pending []*corev1.Pod) *filtering {
		view := s.upstream.NewViewOf(asTheyAre, classes.viewChanges(), classes.onNodes)
		return filterPending(ctx, view, nodes, classes.onNodes, pending, mem.refused, &s.sigs, s.cfg.SchedulerName)
	}
	snap, err := takeFilteredSnapshot(&s.cfg, nodes, s.classes, queues, filter, &s.kept, s.log)
	if snap != nil {
		snap.boundAt, snap.stops, snap.nodeCaps, snap.hints = mem.boundAt, mem.stops, mem.refused.caps, mem.hints
		snap.defrag = s.defrag()
	}
	return snap, err
}

// reportNodes logs, and records a Warning event on, each GPU node whose
// model the catalog lacks (described from its labels) and each left out
// of the fleet, once per node and note. The fleet is built only while
// pods wait, so that is when they are reported.
func (s *Scheduler) reportNodes(snap *snapshot) {
	if snap.state == nil {
		return // no fleet built this cycle
	}
	s.metrics.nodes.WithLabelValues("described").Set(float64(len(snap.described)))
	s.metrics.nodes.WithLabelValues("left-out").Set(float64(len(snap.skipped)))
	notes := make(map[string]string, len(snap.described)+len(snap.skipped))
	for name, note := range snap.described {
		notes[name] = s.reportNode(name, EventUnknownGPUModel, note)
	}
	for name, err := range snap.skipped {
		notes[name] = s.reportNode(name, EventGPUsNotDescribed, "left out of corral's fleet: "+err.Error())
	}
	s.notes = notes // nodes gone or described again drop out
}

// reportNode reports a node's note unless it was the last one reported,
// and returns what to remember.
func (s *Scheduler) reportNode(name, reason, note string) string {
	key := reason + ": " + note
	if s.notes[name] == key {
		return key
	}
	s.log.Warn("GPU node", "node", name, "reason", reason, "note", note)
	if s.events != nil {
		s.events.Event(nodeRef(name), corev1.EventTypeWarning, reason, note)
	}
	return key
}

// evictAll carries out the preemptions and records them.
func (s *Scheduler) evictAll(ctx context.Context, snap *snapshot, preempts []*preemption) {
	for _, p := range preempts {
		s.log.Info("preempting", "for", p.unit, "pods", len(p.pods), "reclaim", p.reclaim, "reason", p.reason)
		s.stopped(p)
		evicted, err := evict(ctx, s.client, p, s.cfg.PreemptionGrace, &s.n)
		if err != nil {
			s.log.Warn("preemption", "err", err)
		}
		s.disrupted(ctx, evicted, p)
		if p.move && len(evicted) > 0 {
			for range p.victims { // each unit moved counts toward the hourly bound
				s.moved = append(s.moved, s.cfg.Now())
			}
			s.movedChanged = true
		}
		for _, v := range evicted {
			s.preempted(v, p)
			r := podRecord("preempted", v, s.node(v.Spec.NodeName), snap.queues, s.cfg.Now())
			r.By = p.unit
			s.ledger.write(recordKey("preempted", string(v.UID)), r)
		}
	}
}

// bindAll binds the placed pods, remembering them as bound until the cache
// shows it, and records who started. The pods of groups are bound in the
// cycle (a gang's record of intent is cleared or acted on as its bindings
// end, before the next cycle looks for records left behind); when
// bindAsync is set, as the scheduling loop sets it, single pods are bound
// in the background while the next cycle decides, which sees them bound
// (assumed) already. At most one such batch runs: the next waits for it.
func (s *Scheduler) bindAll(ctx context.Context, snap *snapshot, units []*unit, binds []binding) {
	binds = s.recordIntents(ctx, units, binds)
	s.assume(binds, snap.now)
	s.waitBinds()
	if !s.bindAsync {
		s.bindAndRecord(ctx, snap, units, binds)
		return
	}
	grouped, single := splitGrouped(units, binds)
	s.bindAndRecord(ctx, snap, units, grouped)
	if len(single) == 0 {
		return
	}
	done := make(chan struct{})
	s.binding = done
	go func() {
		defer close(done)
		s.bindAndRecord(ctx, snap, units, single)
	}()
}

// waitBinds waits for the bindings running in the background, if any.
func (s *Scheduler) waitBinds() {
	if s.binding != nil {
		<-s.binding
		s.binding = nil
	}
}

// splitGrouped separates the bindings of pods in a pod group from those
// of single pods.
func splitGrouped(units []*unit, binds []binding) (grouped, single []binding) {
	inGroup := map[string]bool{}
	for _, u := range units {
		inGroup[u.name] = u.group != nil || len(u.pods) > 1
	}
	for _, b := range binds {
		if inGroup[b.unit] {
			grouped = append(grouped, b)
		} else {
			single = append(single, b)
		}
	}
	return grouped, single
}

// bindAndRecord binds, forgets the pods whose binding failed, and records
// who started.
func (s *Scheduler) bindAndRecord(ctx context.Context, snap *snapshot, units []*unit, binds []binding) {
	if len(binds) == 0 {
		return
	}
	started := map[string][]*corev1.Pod{} // pod group -> pods bound now
	errs := s.bindEach(ctx, binds)
	defer s.settleIntents(ctx, units, binds, errs)
	for i, err := range errs {
		b := binds[i]
		if err != nil {
			s.forget(b.pod)
			s.log.Warn("bind", "err", err)
			continue
		}
		s.bound(b)
		s.ledger.started(b.pod, b.node, s.node(b.node), snap.queues)
		started[b.unit] = append(started[b.unit], b.pod)
	}
	var startedUnits []string
	for _, u := range units {
		if len(started[u.name]) == 0 {
			continue
		}
		startedUnits = append(startedUnits, u.job)
		if GroupName(started[u.name][0]) != "" {
			s.ledger.groupStarted(u.name, started[u.name])
		}
	}
	s.started(startedUnits)
}

// bound records a binding: its Scheduled event, sent off the bind path,
// and its placement latency.
func (s *Scheduler) bound(b binding) {
	s.metrics.placement.Observe(time.Since(b.pod.CreationTimestamp.Time).Seconds())
	if s.events != nil {
		s.events.Event(b.pod, corev1.EventTypeNormal, EventScheduled, fmt.Sprintf("Successfully assigned %s to %s", podKey(b.pod), b.node))
	}
}

// podGroups reads the PodGroups from the cache, by namespace/name, and
// the groups of the pending pods' owners.
func (s *Scheduler) podGroups(pending []*corev1.Pod) map[string]*podGroup {
	out := s.otherGroups(pending)
	for _, u := range s.listCustom(s.native) {
		g, err := parseNativePodGroup(u, s.cfg.Levels)
		if err != nil {
			s.log.Warn("pod group", "err", err)
			continue
		}
		out[g.key()] = g
	}
	for _, u := range s.listCustom(s.groups) { // the coscheduling one wins a name both use
		g, err := parsePodGroup(u)
		if err != nil {
			s.log.Warn("pod group", "err", err)
			continue
		}
		out[g.key()] = g
	}
	return out
}

// queueSpecs reads the Queues from the cache, by name.
func (s *Scheduler) queueSpecs() map[string]*queueSpec {
	out := map[string]*queueSpec{}
	for _, u := range s.listCustom(s.crds.lister(keyQueues)) {
		q, err := parseQueue(u)
		if err != nil {
			s.log.Warn("queue", "err", err)
			continue
		}
		out[q.Name] = q
	}
	return out
}

func (s *Scheduler) listCustom(l cache.GenericLister) []*unstructured.Unstructured {
	if l == nil {
		return nil
	}
	objs, err := l.List(labels.Everything())
	if err != nil {
		s.log.Warn("listing custom resources", "err", err)
		return nil
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out
}

// memory is what the scheduler remembers of the pods a cycle sees.
type memory struct {
	assumed map[string]string           // pod uid -> node: bound here, not yet seen bound
	boundAt map[types.UID]time.Time     // when this replica bound them
	stops   map[string]sched.Remembered // by unit name
	hints   map[string]int              // by unit name: sched.Memory.ReserveHint
	refused refusedNodes
}

// recall forgets what is about pods gone or caught up with (an
// assumption the cache now shows, the bind time of a pod gone, the stops
// of a unit gone, the refusals of a pod bound or gone), and returns the
// rest for the cycle. It looks at what it remembers, and at the pods
// deleted since the last cycle, not at every pod. The bind times are
// handed over as they are: only the cycle's goroutine changes them.
func (s *Scheduler) recall() memory {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := memory{stops: map[string]sched.Remembered{}, refused: refusedNodes{pods: map[types.UID][]string{}, caps: map[string]int{}}}
	unbound := func(uid types.UID) bool {
		p := s.podsNow.raw[uid]
		return p != nil && p.Spec.NodeName == ""
	}
	maps.DeleteFunc(s.assumed, func(uid, _ string) bool { return !unbound(types.UID(uid)) })
	for _, uid := range s.podsNow.takeGone() {
		delete(s.boundAt, uid)
	}
	m.assumed, m.boundAt = maps.Clone(s.assumed), s.boundAt
	for uid, r := range s.refusals {
		if unbound(uid) {
			m.refused.add(uid, r)
		}
	}
	if s.units.Len() > 0 {
		present := func(name string) bool { return s.podsNow.units[name] > 0 }
		s.units.Keep(s.cfg.Now(), present)
		for name, r := range s.units.Snapshot() {
			if present(name) && r != (sched.Remembered{}) {
				m.stops[name] = r
			}
		}
	}
	return m
}

// reserveHints are the hints of the pending pods' units
// (sched.Memory.ReserveHint), by unit name.
func (s *Scheduler) reserveHints() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, p := range s.classes.pending {
		if h := s.units.ReserveHint(unitName(p)); h > 0 {
			out[unitName(p)] = h
		}
	}
	return out
}

// classify classes again the pods changed since the last cycle, those
// assumed bound or stopping now or in the last cycle, and those DRA may
// describe (described afresh each cycle): a pod this replica assumed
// bound counts as bound there, a pod it stopped for a fault as being
// deleted (markStopping).
func (s *Scheduler) classify(changed []types.UID, describe func([]*corev1.Pod) []*corev1.Pod, assumed map[string]string) {
	again := s.touched
	if again == nil {
		again = map[types.UID]bool{}
	}
	for _, uid := range changed {
		again[uid] = true
	}
	s.touched = map[types.UID]bool{}
	for uid := range assumed {
		again[types.UID(uid)], s.touched[types.UID(uid)] = true, true
	}
	for uid := range s.handled {
		if s.podsNow.raw[uid] == nil {
			delete(s.handled, uid) // gone
			continue
		}
		again[uid], s.touched[uid] = true, true
	}
	if s.dra.slices != nil {
		maps.Copy(again, s.podsNow.claimed)
		if s.dra.classFor != nil && s.dra.classFor(ResourceGPU) != "" {
			maps.Copy(again, s.podsNow.gpus)
		}
	}
	pods := make([]*corev1.Pod, 0, len(again))
	for uid := range again {
		if p := s.podsNow.raw[uid]; p != nil {
			pods = append(pods, p)
		} else {
			s.classes.set(uid, nil, "")
		}
	}
	for _, p := range s.markStopping(describe(pods)) {
		node := p.Spec.NodeName
		if node == "" {
			node = assumed[string(p.UID)]
		}
		s.classes.set(p.UID, p, node)
	}
}

// stopped remembers the units a preemption stopped.
func (s *Scheduler) stopped(p *preemption) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.units.Preempted(p.forJob, p.victims)
}

// reserved remembers the reservations a cycle ended with, whose hints
// speed the next cycle's search (they change no decision).
func (s *Scheduler) reserved(r []sched.Reservation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.units.Reserved(sched.Decisions{Reservations: r})
}

// started forgets the claims of the units a cycle started.
func (s *Scheduler) started(units []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.units.Started(units...)
}

// assume remembers the pods as bound at, before the cache shows it, and
// stamps the bindings with it.
func (s *Scheduler) assume(binds []binding, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range binds {
		b := &binds[i]
		b.at = at
		s.assumed[string(b.pod.UID)] = b.node
		s.boundAt[b.pod.UID] = at
	}
}

func (s *Scheduler) forget(p *corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.assumed, string(p.UID))
}

// node returns the named node from the cache, or nil.
func (s *Scheduler) node(name string) *corev1.Node {
	n, err := s.nodes.Get(name)
	if err != nil {
		return nil
	}
	return n
}

// podUpdated records the end of a bound pod of this scheduler that
// reached Succeeded or Failed.
func (s *Scheduler) podUpdated(old, cur any) {
	o, ok1 := old.(*corev1.Pod)
	p, ok2 := cur.(*corev1.Pod)
	if !ok1 || !ok2 || !s.accounts(p) || terminal(o) || !terminal(p) {
		return
	}
	queues := s.queueSpecs()
	s.ledger.ended(p, string(p.Status.Phase), s.node(p.Spec.NodeName), queues)
	s.budgetEnded(p, queues)
}

// podDeleted records the end of a bound pod of this scheduler that went
// away before finishing.
func (s *Scheduler) podDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok || !s.accounts(p) || terminal(p) {
		return
	}
	queues := s.queueSpecs()
	s.ledger.ended(p, "Deleted", s.node(p.Spec.NodeName), queues)
	s.budgetEnded(p, queues)
}

// budgetEnded adds what a bound pod that ended used to its queue's
// budget, when the queue has one.
func (s *Scheduler) budgetEnded(p *corev1.Pod, queues map[string]*queueSpec) {
	q := queues[p.Labels[LabelQueue]]
	if q == nil || q.Budget == nil {
		return
	}
	r := podRecord("end", p, s.node(p.Spec.NodeName), queues, s.cfg.Now())
	s.mu.Lock()
	from := boundTime(p, s.boundAt) // this replica's clock where it bound the pod
	s.mu.Unlock()
	s.spent.add(q.Name, string(p.UID), p.Spec.NodeName, r.GPUs, from, r.Time)
}

func (s *Scheduler) accounts(p *corev1.Pod) bool {
	return s.leading.Load() && p.Spec.SchedulerName == s.cfg.SchedulerName && p.Spec.NodeName != ""
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

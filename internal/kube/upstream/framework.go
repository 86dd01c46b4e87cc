package upstream

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	"k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

// filterPlugins are the plugins whose PreFilter and Filter decide where a
// pod may run, in the order kube-scheduler's default profile runs them.
var filterPlugins = []string{
	names.NodeUnschedulable, names.NodeName, names.TaintToleration, names.NodeAffinity,
	names.NodePorts, names.NodeResourcesFit, names.VolumeRestrictions, names.NodeVolumeLimits,
	names.VolumeBinding, names.VolumeZone, names.PodTopologySpread, names.InterPodAffinity,
	names.DynamicResources,
}

// claimPlugins reserve and bind what a placed pod claims.
var claimPlugins = []string{names.VolumeBinding, names.DynamicResources}

// Framework is the scheduler framework with the filter plugins, reading
// the cluster through an informer factory and a snapshot corral builds
// each cycle.
type Framework struct {
	fw     framework.Framework
	lister *lister
	// kept is the cluster the views show, kept from one to the next.
	kept *keptCluster
	last *View // the last view of kept, whose placements it forgets next
	// deltas: the kept cluster is as the last NewViewOf left it, so the
	// next may be told only what changed since.
	deltas bool
	// classes says which extended resources DeviceClasses stand for.
	classes fwk.DeviceClassResolver
}

// mapped reports whether a DeviceClass stands for the extended resource.
func (f *Framework) mapped(name corev1.ResourceName) bool { return f.ClassFor(name) != "" }

// ClassFor names the DeviceClass that stands for the extended resource
// (its extendedResourceName, or deviceclass.resource.kubernetes.io/<class>),
// "" for none: the framework's own cache of the mapping.
func (f *Framework) ClassFor(name corev1.ResourceName) string {
	if f.classes == nil {
		return ""
	}
	if c := f.classes.GetDeviceClass(name); c != nil {
		return c.Name
	}
	return ""
}

// checked is pod as the plugins are shown it (withoutCoreResources).
func (f *Framework) checked(pod *corev1.Pod) *corev1.Pod { return withoutCoreResources(pod, f.mapped) }

// New builds the framework for schedulerName. Its plugins register their
// informers with factory, which the caller starts afterwards; ctx bounds
// the goroutines some plugins run.
func New(ctx context.Context, client kubernetes.Interface, factory informers.SharedInformerFactory, schedulerName string) (*Framework, error) {
	schedmetrics.Register() // the framework counts into kube-scheduler's metrics
	profile, err := newProfile(schedulerName)
	if err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	claims := assumecache.NewAssumeCache(logger, factory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	slices, err := tracker.StartTracker(ctx, tracker.Options{SliceInformer: factory.Resource().V1().ResourceSlices(), KubeClient: client})
	if err != nil {
		return nil, fmt.Errorf("scheduler framework: resource slices: %w", err)
	}
	l := &lister{}
	dra := dynamicresources.NewDRAManager(ctx, claims, slices, factory)
	// Which extended resources DeviceClasses stand for (KEP-5004) is a
	// cache kept by the DeviceClass informer, as kube-scheduler's event
	// handlers keep it.
	if ers, ok := dra.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache); ok && ers != nil {
		if _, err := factory.Resource().V1().DeviceClasses().Informer().AddEventHandler(ers); err != nil {
			return nil, fmt.Errorf("scheduler framework: device classes: %w", err)
		}
	}
	fw, err := frameworkruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), profile,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSharedDRAManager(dra),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithSnapshotSharedLister(l),
		frameworkruntime.WithParallelism(1),
		frameworkruntime.WithLogger(logger),
	)
	if err != nil {
		return nil, fmt.Errorf("scheduler framework: %w", err)
	}
	return &Framework{fw: fw, lister: l, kept: newKeptCluster(ctx), classes: dra.DeviceClassResolver()}, nil
}

// newProfile is kube-scheduler's default profile, with its plugins' default
// arguments, running only the filter and claim plugins.
func newProfile(schedulerName string) (*config.KubeSchedulerProfile, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, fmt.Errorf("scheduler framework: default configuration: %w", err)
	}
	profile := cfg.Profiles[0]
	profile.SchedulerName = schedulerName
	profile.Plugins = &config.Plugins{
		QueueSort: enabled(names.PrioritySort),
		PreFilter: enabled(filterPlugins...),
		Filter:    enabled(filterPlugins...),
		Reserve:   enabled(claimPlugins...),
		PreBind:   enabled(claimPlugins...),
		Bind:      enabled(names.DefaultBinder),
	}
	return &profile, nil
}

func enabled(plugins ...string) config.PluginSet {
	var s config.PluginSet
	for _, p := range plugins {
		s.Enabled = append(s.Enabled, config.Plugin{Name: p})
	}
	return s
}

// lister is the framework's view of the cluster: the snapshot of the
// current cycle, swapped in by NewView.
type lister struct{ fwk.SharedLister }

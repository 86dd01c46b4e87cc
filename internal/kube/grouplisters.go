package kube

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	listersbatchv1 "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
)

// groupListers read the groups users do not write for corral: other
// schedulers' PodGroups, Jobs and JobSets. A lister is nil where the API
// server does not serve its resource.
type groupListers struct {
	volcano, kai, jobsets cache.GenericLister
	jobs                  listersbatchv1.JobLister
}

// nativeLister watches Kubernetes' own PodGroups at the first version of
// NativePodGroupVersions the API server serves, or returns nil.
func (s *Scheduler) nativeLister(h cache.ResourceEventHandler) cache.GenericLister {
	v := servedVersion(s.client.Discovery(), NativePodGroupResource.Group, NativePodGroupResource.Resource, NativePodGroupVersions)
	if v == "" {
		s.log.Info("Kubernetes' own PodGroup API is not served by this cluster (scheduling.k8s.io, feature GenericWorkload)", "versions", NativePodGroupVersions)
		return nil
	}
	s.log.Info("reading Kubernetes' own PodGroups", "version", "scheduling.k8s.io/"+v)
	r := NativePodGroupResource
	r.Version = v
	s.nativeRes = r
	inf := s.dynf.ForResource(r)
	_, _ = inf.Informer().AddEventHandler(h)
	return inf.Lister()
}

// newGroupListers watches Jobs, and the group resources the API server
// serves.
func (s *Scheduler) newGroupListers(h cache.ResourceEventHandler) groupListers {
	jobs := s.factory.Batch().V1().Jobs()
	_, _ = jobs.Informer().AddEventHandler(h)
	return groupListers{
		jobs:    jobs.Lister(),
		volcano: s.optionalLister(VolcanoPodGroupResource, h),
		kai:     s.optionalLister(KAIPodGroupResource, h),
		jobsets: s.optionalLister(JobSetResource, h),
	}
}

// optionalLister watches r where the API server serves it; another
// project's resource, so its absence is no warning.
func (s *Scheduler) optionalLister(r schema.GroupVersionResource, h cache.ResourceEventHandler) cache.GenericLister {
	if servedVersion(s.client.Discovery(), r.Group, r.Resource, []string{r.Version}) == "" {
		return nil
	}
	s.log.Info("reading groups", "resource", r.GroupResource().String()+"/"+r.Version)
	inf := s.dynf.ForResource(r)
	_, _ = inf.Informer().AddEventHandler(h)
	return inf.Lister()
}

// otherGroups reads Volcano's and KAI's PodGroups, Jobs, JobSets and the
// LeaderWorkerSet groups of the pending pods, by namespace/name.
func (s *Scheduler) otherGroups(pending []*corev1.Pod) map[string]*podGroup {
	out := map[string]*podGroup{}
	for kind, l := range map[string]cache.GenericLister{KindVolcano: s.more.volcano, KindKAI: s.more.kai} {
		for _, u := range s.listCustom(l) {
			g, err := parseMinMemberGroup(u, kind)
			if err != nil {
				s.log.Warn("pod group", "err", err)
				continue
			}
			out[g.key()] = g
		}
	}
	for _, u := range s.listCustom(s.more.jobsets) {
		g, err := jobSetGroup(u)
		if err != nil {
			s.log.Warn("jobset", "err", err)
			continue
		}
		out[g.key()] = g
	}
	if s.more.jobs != nil {
		jobs, err := s.more.jobs.List(labels.Everything())
		if err != nil {
			s.log.Warn("listing jobs", "err", err)
		}
		for _, j := range jobs {
			g := jobGroup(j)
			out[g.key()] = g
		}
	}
	lwsGroups(pending, out)
	return out
}

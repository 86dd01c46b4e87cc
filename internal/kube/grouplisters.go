package kube

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
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

// newGroupListers watches Jobs; the listers of the custom group
// resources are set by useLive each cycle.
func (s *Scheduler) newGroupListers(h cache.ResourceEventHandler) groupListers {
	jobs := s.factory.Batch().V1().Jobs()
	_, _ = jobs.Informer().AddEventHandler(h)
	return groupListers{jobs: jobs.Lister()}
}

// markUnserved gives each pending pod of a group whose resource the API
// server does not serve a group that says so, in place of "does not
// exist".
func (s *Scheduler) markUnserved(pending []*corev1.Pod, groups map[string]*podGroup) {
	for _, p := range pending {
		name, kind := groupOf(p)
		key := p.Namespace + "/" + name
		if name == "" || groups[key] != nil {
			continue
		}
		if why := s.notServed(kind); why != "" {
			groups[key] = &podGroup{Namespace: p.Namespace, Name: name, Kind: kind, Native: kind == KindNative, MinMember: 1, Invalid: why}
		}
	}
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

package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/sched"
)

func isGone(err error) bool { return apierrors.IsNotFound(err) || apierrors.IsConflict(err) }

// move is one failed member and where it goes.
type move struct {
	pod      *corev1.Pod
	to       string
	gpu      string        // the GPU of the node moved to that a time-sliced share is counted on (binding.shareGPU)
	borrowed []*corev1.Pod // preemptible pods on the spare, evicted for it
}

// replace moves the gang's pods on the failed node to a hot spare (or
// else a free node) of the same domain, innermost first and no wider than
// the gang's required pack level: each is deleted and started again
// there as a copy; the rest of the gang stays. It returns the node moved
// to, or why nothing was done.
func (s *Scheduler) replace(ctx context.Context, w *stricken, ann map[string]string, nodes []*corev1.Node, pods []*corev1.Pod) (string, error) {
	for _, p := range w.failures {
		if metav1.GetControllerOf(p) != nil {
			return "", fmt.Errorf("pod %s has a controller, which starts it again", podKey(p))
		}
	}
	moves, err := s.planMoves(ctx, w, nodes, pods)
	if err != nil {
		return "", err
	}
	resume := resumeFrom(w.members, ann)
	if resume != "" {
		if err := s.annotateGroup(ctx, w.group, map[string]any{AnnotationResumeFrom: resume}); err != nil {
			return "", err
		}
	}
	var binds []binding
	for _, m := range moves {
		if len(m.borrowed) > 0 {
			if _, err := evict(ctx, s.client, &preemption{unit: w.group.key(), pods: m.borrowed}, s.cfg.PreemptionGrace, &s.n); err != nil {
				return "", err
			}
		}
		c, err := s.restart(ctx, m.pod, resume)
		if err != nil {
			return "", err
		}
		binds = append(binds, binding{pod: c, node: m.to, unit: w.group.key(), shareGPU: m.gpu})
	}
	s.bindMoved(ctx, w.group, binds)
	return moves[0].to, nil
}

// restart deletes a member on the failed node at once and creates its
// copy, pending.
func (s *Scheduler) restart(ctx context.Context, p *corev1.Pod, resume string) (*corev1.Pod, error) {
	zero := int64(0)
	err := s.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if err != nil && !isGone(err) {
		return nil, fmt.Errorf("stopping %s: %w", podKey(p), err)
	}
	s.handled[p.UID] = true
	extra := map[string]string{}
	if resume != "" {
		extra[AnnotationResumeFrom] = resume
	}
	c, err := s.client.CoreV1().Pods(p.Namespace).Create(ctx, podCopy(p, extra), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("starting %s again: %w", podKey(p), err)
	}
	return c, nil
}

// bindMoved binds the copies as a gang's placement is bound: recorded
// first, finished or undone if a binding is refused.
func (s *Scheduler) bindMoved(ctx context.Context, g *podGroup, binds []binding) {
	if err := s.writeIntent(ctx, g, binds); err != nil {
		s.log.Warn("recording a replacement", "group", g.key(), "err", err)
	}
	s.assume(binds, s.cfg.Now())
	errs := bindAll(ctx, s.client, binds, &s.n)
	failed := false
	for i, err := range errs {
		if err != nil {
			s.forget(binds[i].pod)
			failed = true
			continue
		}
		s.bound(binds[i])
	}
	if failed {
		s.resolveGroup(ctx, g)
		return
	}
	if err := s.clearIntent(ctx, g); err != nil {
		s.log.Warn("clearing a replacement's record", "group", g.key(), "err", err)
	}
}

// planMoves finds a node for each failed member in the cluster as it is,
// taking room as it goes, or says why there is none. The core moves them
// (gang.State.ReplaceMember: a spare of the failed node's innermost domain
// first, then a free node there, evicting the pods lent the spare, never
// wider than the gang's required pack level nor against a required
// spread). Kubernetes' filter
// plugins judge each copy as they judge every pod corral places (its
// nodeSelector, affinity, taints, volumes, claims): a node they refuse it
// is closed to it, as to a pending pod (moveFilters).
func (s *Scheduler) planMoves(ctx context.Context, w *stricken, nodes []*corev1.Node, pods []*corev1.Pod) ([]move, error) {
	closed, opens, err := s.moveFilters(ctx, w.failures, nodes, pods)
	if err != nil {
		return nil, err
	}
	f, _, _ := buildFleet(nodes, &s.cfg, closed)
	st, err := gang.New(f)
	if err != nil {
		return nil, err
	}
	byNode := map[string][]*corev1.Pod{}
	for _, p := range pods {
		if p.Spec.NodeName != "" && !terminal(p) {
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
		}
	}
	bound := map[string]*corev1.Pod{}
	for _, b := range pinBound(st, byNode, sched.Charger{GPU: anyGPU}, s.log) { // the charge is not used here
		bound[b.job] = b.pod
	}
	if err := lendSpares(st, f, byNode, w); err != nil {
		return nil, err
	}
	g := gangOf(w)
	taints := clusterTaints(nodes)
	var moves []move
	for i, p := range w.failures {
		m, err := moveOff(st, p, w.node, append(tolerated([]*corev1.Pod{p}, taints), opens[i]...), bound, g)
		if err != nil {
			return nil, fmt.Errorf("moving %s off %s: %w", podKey(p), w.node, err)
		}
		moves = append(moves, m)
	}
	if len(moves) == 0 {
		return nil, errors.New("nothing to move")
	}
	return moves, nil
}

// lendSpares marks the pods on spares, other than the gang's, as lent:
// preemptible, so that a replacement evicts them.
func lendSpares(st *gang.State, f *fleet.Fleet, byNode map[string][]*corev1.Pod, w *stricken) error {
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if !n.Spare {
			continue
		}
		for _, p := range byNode[n.Name] {
			if w.group != nil && GroupName(p) == w.group.Name && p.Namespace == w.group.Namespace {
				continue
			}
			d, err := demand(p)
			if err != nil || st.Job(boundJobName(p)) == nil {
				continue // not pinned: it holds nothing in this view
			}
			j := &job.Job{Name: boundJobName(p), Preemptible: true, Groups: []job.Group{{Name: "pod", Count: 1, Task: d}}}
			if err := st.Release(j.Name); err != nil {
				return err
			}
			if _, err := st.Adopt(j, n.Name); err != nil {
				return fmt.Errorf("lending spare %s: %w", n.Name, err)
			}
		}
	}
	return nil
}

// movingGang is what bounds a member's move: the group's topology and its
// members' jobs in the core's state.
type movingGang struct {
	topology []job.Constraint
	members  []string
}

func gangOf(w *stricken) movingGang {
	var g movingGang
	if w.group != nil {
		g.topology = w.group.Topology
	}
	for _, p := range w.members {
		g.members = append(g.members, boundJobName(p))
	}
	return g
}

// moveOff moves one failed pod, pinned on node from, with the tolerations
// given, through gang.State.ReplaceMember: the core keeps the gang's
// required topology (no wider than its pack level, a required spread kept).
func moveOff(st *gang.State, p *corev1.Pod, from string, tolerations []string, bound map[string]*corev1.Pod, g movingGang) (move, error) {
	d, err := demand(p)
	if err != nil {
		return move{}, err
	}
	name := boundJobName(p)
	if st.Job(name) != nil {
		if err := st.Release(name); err != nil {
			return move{}, err
		}
	}
	j := &job.Job{Name: name, Tolerations: append(tolerations, coreTolerations(p, d)...), Groups: []job.Group{{Name: "pod", Count: 1, Task: d}}}
	if _, err := st.Adopt(j, from); err != nil {
		return move{}, err
	}
	rep, err := st.ReplaceMember(name, from, g.topology, g.members)
	if err != nil {
		return move{}, err
	}
	m := move{pod: p, to: rep.To}
	if pl := st.Job(name); pl != nil && len(pl.Tasks) == 1 {
		m.gpu = sharedOn(pl.Tasks[0], p)
	}
	for _, e := range rep.Evicted {
		if lent := bound[e]; lent != nil {
			m.borrowed = append(m.borrowed, lent)
		}
	}
	return m, nil
}

// AnnotationPreemptible "true" on every pod of a unit, with
// AnnotationRuntime no longer than the spare loan (gang.DefaultSpareLoan),
// lets the unit borrow hot spares.
const AnnotationPreemptible = "corral.sh/preemptible"

// lendable says whether the pods may be lent a spare, and for how long
// they run.
func lendable(pods []*corev1.Pod) (bool, time.Duration) {
	var longest time.Duration
	for _, p := range pods {
		d, err := time.ParseDuration(p.Annotations[AnnotationRuntime])
		if err != nil || p.Annotations[AnnotationPreemptible] != "true" {
			return false, 0
		}
		longest = max(longest, d)
	}
	return len(pods) > 0, longest
}

// moveFilters runs Kubernetes' filter plugins for a copy of each failed
// member on the cluster as it is. closed holds, by node, the taints of the
// members the plugins refuse there (a taint of the filterPrefix per
// member); opens[i] the taints member i tolerates: every other member's.
func (s *Scheduler) moveFilters(ctx context.Context, failures []*corev1.Pod, nodes []*corev1.Node, pods []*corev1.Pod) (closed map[string][]string, opens [][]string, err error) {
	if s.upstream == nil {
		return nil, make([][]string, len(failures)), nil
	}
	var on []*corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != "" && !terminal(p) && p.DeletionTimestamp == nil {
			on = append(on, p)
		}
	}
	view := s.upstream.NewView(nodes, on)
	closed, opens = map[string][]string{}, make([][]string, len(failures))
	taints := make([]string, len(failures))
	for i := range failures {
		taints[i] = fmt.Sprintf("%smove-%d:NoSchedule", filterPrefix, i)
	}
	for i, p := range failures {
		c := podCopy(p, nil)
		c.UID = p.UID + "-copy"
		v := view.Allowed(ctx, c)
		if v.Err != nil {
			return nil, nil, fmt.Errorf("filtering the move of %s: %w", podKey(p), v.Err)
		}
		for _, n := range nodes {
			if _, ok := slices.BinarySearch(v.Nodes, n.Name); !ok {
				closed[n.Name] = append(closed[n.Name], taints[i])
			}
		}
		for j := range failures {
			if j != i {
				opens[i] = append(opens[i], taints[j])
			}
		}
	}
	return closed, opens, nil
}

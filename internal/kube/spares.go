package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

func isGone(err error) bool { return apierrors.IsNotFound(err) || apierrors.IsConflict(err) }

// move is one failed member and where it goes.
type move struct {
	pod      *corev1.Pod
	to       string
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
	moves, err := s.planMoves(w, nodes, pods)
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
		binds = append(binds, binding{pod: c, node: m.to, unit: w.group.key()})
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
	s.assume(binds)
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
// taking room as it goes, or says why there is none.
func (s *Scheduler) planMoves(w *stricken, nodes []*corev1.Node, pods []*corev1.Pod) ([]move, error) {
	f, _, _ := buildFleet(nodes, &s.cfg, nil)
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
	pinBound(st, byNode, s.log)
	from := slices.IndexFunc(f.Nodes, func(n fleet.Node) bool { return n.Name == w.node })
	if from < 0 {
		return nil, fmt.Errorf("node %s is not in the fleet", w.node)
	}
	widest := 0
	if w.group != nil {
		for _, c := range w.group.Topology {
			if i := slices.Index(f.Levels, c.Level); c.Required && !c.Spread && i >= 0 {
				widest = max(widest, i)
			}
		}
	}
	var moves []move
	for _, p := range w.failures {
		m, ok := s.placeMove(st, f, from, widest, p, byNode, w)
		if !ok {
			return nil, fmt.Errorf("no spare or free node in the %s of %s can take %s", f.Levels[max(widest, 0)], w.node, podKey(p))
		}
		moves = append(moves, m)
	}
	if len(moves) == 0 {
		return nil, errors.New("nothing to move")
	}
	return moves, nil
}

// placeMove finds the node for one pod: innermost domain of the failed
// node first, up to level widest; spares before other nodes.
func (s *Scheduler) placeMove(st *gang.State, f *fleet.Fleet, from, widest int, p *corev1.Pod, byNode map[string][]*corev1.Pod, w *stricken) (move, bool) {
	d, err := demand(p)
	if err != nil {
		return move{}, false
	}
	j := &job.Job{Name: "move " + string(p.UID), Groups: []job.Group{{Name: "pod", Count: 1, Task: d}}}
	home := f.Nodes[from].Domains
	for l := len(f.Levels) - 1; l >= widest; l-- {
		for _, spare := range []bool{true, false} {
			for i := range f.Nodes {
				n := &f.Nodes[i]
				if i == from || n.Spare != spare || !n.Schedulable() || !slices.Equal(n.Domains[:l+1], home[:l+1]) || !admits(n, p, d) {
					continue
				}
				if _, err := st.Adopt(j, n.Name); err == nil {
					return move{pod: p, to: n.Name}, true
				}
				if spare {
					if borrowed, ok := s.borrowSpare(st, j, n.Name, byNode[n.Name], w); ok {
						return move{pod: p, to: n.Name, borrowed: borrowed}, true
					}
				}
			}
		}
	}
	return move{}, false
}

// admits: the node's taints are tolerated and its GPU model allowed.
func admits(n *fleet.Node, p *corev1.Pod, d job.Demand) bool {
	if len(d.Models) > 0 && !slices.Contains(d.Models, n.GPUModel) {
		return false
	}
	for _, t := range n.Taints {
		key, rest, _ := strings.Cut(t, "=")
		value, effect, _ := strings.Cut(rest, ":")
		taint := corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}
		if !toleratesTaint(p, &taint) {
			return false
		}
	}
	return true
}

// borrowSpare frees a spare of the pods lent it (pods not of the gang)
// and adopts j there; when that is not enough, they are put back.
func (s *Scheduler) borrowSpare(st *gang.State, j *job.Job, node string, there []*corev1.Pod, w *stricken) ([]*corev1.Pod, bool) {
	var lent []*corev1.Pod
	for _, p := range there {
		if w.group != nil && GroupName(p) == w.group.Name && p.Namespace == w.group.Namespace {
			continue
		}
		if st.Release(boundJobName(p)) == nil {
			lent = append(lent, p)
		}
	}
	if _, err := st.Adopt(j, node); err == nil {
		return lent, true
	}
	for _, p := range lent {
		_, _ = pinPod(st, node, p)
	}
	return nil, false
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

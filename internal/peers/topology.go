package peers

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/kube"
)

// kueueRequiredTopology is the pod template annotation that asks Kueue's
// topology-aware scheduling to keep a pod set in one domain of a level,
// named by its node label.
const kueueRequiredTopology = "kueue.x-k8s.io/podset-required-topology"

// levelLabels are the node labels of the levels a replayed job may be
// packed in (Fleet.labels).
var levelLabels = map[string]string{"rack": kube.LabelCorralRack, "block": kube.LabelCorralBlock}

// requiredPack is the level j must be packed in and its node label, or
// "" for none.
func requiredPack(j *job.Job) (level, label string, err error) {
	for _, c := range j.Topology {
		if !c.Required || c.Spread {
			continue
		}
		l, ok := levelLabels[c.Level]
		if !ok {
			return "", "", fmt.Errorf("packed in %q: the replay's fleet has levels rack and block only", c.Level)
		}
		return c.Level, l, nil
	}
	return "", "", nil
}

// constrain says j's gang and required topology to the scheduler of o in
// its own terms: a Workload API PodGroup (KubeGang, and corral with
// Options.PodGroups), corral's pack annotation on the Job, or Kueue's
// required-topology annotation (KueueTAS). KubePacked and Kueue have
// neither gangs nor topology; a job asking for it there runs without.
func (r *Rig) constrain(ctx context.Context, bj *batchv1.Job, j *job.Job, o Options) error {
	level, label, err := requiredPack(j)
	if err != nil {
		return err
	}
	switch {
	case o.Scheduler == KubeGang || isCorral(o.Scheduler) && o.PodGroups:
		if j.Tasks() < 2 {
			return nil
		}
		return r.podGroup(ctx, bj, int32(j.Tasks()), label)
	case isCorral(o.Scheduler):
		if level != "" {
			bj.Annotations[kube.AnnotationPack] = level
		}
	case o.Scheduler == KueueTAS:
		if label != "" {
			bj.Spec.Template.Annotations[kueueRequiredTopology] = label
		}
	}
	return nil
}

// podGroup creates the Workload API PodGroup of bj, a gang of minCount
// pods in one domain of the level labelled topologyKey (none when
// empty), and names it in bj's pod template.
func (r *Rig) podGroup(ctx context.Context, bj *batchv1.Job, minCount int32, topologyKey string) error {
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: bj.Name, Namespace: bj.Namespace, Labels: map[string]string{labelReplay: "1"}},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}},
		},
	}
	if topologyKey != "" {
		pg.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{
			Topology: []schedulingv1beta1.TopologyConstraint{{Key: topologyKey}}}
	}
	if _, err := r.Client.SchedulingV1beta1().PodGroups(bj.Namespace).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("pod group: %w", err)
	}
	name := bj.Name
	bj.Spec.Template.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
	return nil
}

package kube

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jobGangEnv is four 8-GPU nodes of one rack and an indexed Job of four
// 8-GPU pods (parallelism = completions = 4): a gang inferred from its
// owner, with no PodGroup to record its placement on. The scheduler keeps
// its memory, and so the record, in a ConfigMap, as deploy/ runs it.
func jobGangEnv(t *testing.T) (*env, Config) {
	e := newEnv(t)
	for i := range 4 {
		e.node(fmt.Sprintf("jg-%d", i), 8, map[string]string{"corral.test/rack": "r1"})
	}
	four, indexed := int32(4), batchv1.IndexedCompletion
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "jgang"},
		Spec: batchv1.JobSpec{Parallelism: &four, Completions: &four, CompletionMode: &indexed,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, SchedulerName: DefaultSchedulerName,
				Containers: []corev1.Container{{Name: "main", Image: "registry.invalid/train:1"}}}}},
	}
	j, err := e.c.Client.BatchV1().Jobs(e.ns).Create(context.Background(), j, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		e.create(jobPod(j, i, 8))
	}
	cfg := e.config()
	cfg.UnitMemoryConfigMap = leaseNamespace + "/" + e.ns + "-memory"
	t.Cleanup(func() {
		_ = e.c.Client.CoreV1().ConfigMaps(leaseNamespace).Delete(context.Background(), e.ns+"-memory", metav1.DeleteOptions{})
	})
	return e, cfg
}

// bindingRecorded says whether the units' memory holds a gang's
// placement record, and which.
func (e *env) bindingRecorded() (bool, string) {
	e.t.Helper()
	cm, err := e.c.Client.CoreV1().ConfigMaps(leaseNamespace).Get(context.Background(), e.ns+"-memory", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, ""
	}
	if err != nil {
		e.t.Fatal(err)
	}
	for k := range cm.Data {
		if strings.HasPrefix(k, bindingKeyPrefix) {
			return true, k
		}
	}
	return false, ""
}

// TestIndexedJobLeaderDiesBetweenBinds kills the leader after k of an
// indexed Job's 4 bindings, for every k, then changes the world as the
// case says and runs one cycle of a new leader: the gang is whole or not
// bound at all, and the record is gone. Before, a gang inferred from its
// owner was bound without a record, and a new leader left it half-bound,
// its other pods waiting for the gang itself to end.
func TestIndexedJobLeaderDiesBetweenBinds(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(e *env)
		want   int
	}{
		{"nothing changed", func(*env) {}, 4},
		{"a pending member deleted", func(e *env) { e.deletePod(e.pendingMember()) }, 0},
	} {
		for k := range 4 {
			t.Run(fmt.Sprintf("%s/after %d binds", c.name, k), func(t *testing.T) {
				e, cfg := jobGangEnv(t)
				stuck, kill := e.dyingLeader(k, cfg)
				select {
				case <-stuck:
				case <-time.After(30 * time.Second):
					t.Fatal("the binder never reached the binding to die at")
				}
				recorded, key := e.bindingRecorded()
				if b, _ := e.liveBound(); b != k || !recorded {
					t.Fatalf("before the crash: %d bound, record %v; want %d and a record", b, recorded, k)
				}
				if want := bindingKeyPrefix + e.ns + "_job_jgang"; key != want {
					t.Errorf("record under %q, want %q", key, want)
				}
				kill()
				c.change(e)
				e.newLeaderCycle(cfg)
				if b, _ := e.liveBound(); b != c.want {
					t.Errorf("after one cycle of the new leader: %d pods bound, want %d", b, c.want)
				}
				if recorded, key := e.bindingRecorded(); recorded {
					t.Errorf("the placement record %s is still there", key)
				}
			})
		}
	}
}

// A record in the units' memory is not a unit's memory: the units are
// read back beside it, and a key that is no record is reported and left.
func TestBindingRecordsBesideUnitMemory(t *testing.T) {
	e := newEnv(t)
	at := leaseNamespace + "/" + e.ns + "-mixed"
	st, err := newMemoryStore(e.deployed().Client, at)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.c.Client.CoreV1().ConfigMaps(leaseNamespace).Delete(context.Background(), e.ns+"-mixed", metav1.DeleteOptions{})
	})
	ctx := context.Background()
	g := &podGroup{Namespace: "ns", Name: "jobset:pt", Kind: KindJobSet, MinMember: 4}
	in := intent{At: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Members: []intentMember{{Pod: "pt-0", UID: "u0", Node: "n0"}}}
	if err := st.writeBinding(ctx, g, in); err != nil { // creates the ConfigMap
		t.Fatal(err)
	}
	if err := st.patch(ctx, map[string]any{bindingKeyPrefix + "junk": "{"}); err != nil {
		t.Fatal(err)
	}
	units, err := st.load(ctx)
	if err != nil || len(units) != 0 {
		t.Errorf("units %v, %v: want none, and the records not read as units", units, err)
	}
	got, err := st.bindings(ctx)
	if err == nil || !strings.Contains(err.Error(), "binding.junk") {
		t.Errorf("err %v, want the malformed key named", err)
	}
	b := got[bindingKey(g)]
	if len(got) != 1 || b == nil || !reflect.DeepEqual(b.podGroup(), g) || len(b.Members) != 1 || b.Members[0] != in.Members[0] {
		t.Fatalf("records %+v, want the JobSet's", got)
	}
	if err := st.clearBinding(ctx, g); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.bindings(ctx); len(got) != 0 {
		t.Errorf("after clearing: %+v", got)
	}
}

func TestOwnerRefOfInferredGroups(t *testing.T) {
	for _, tc := range []struct {
		g    podGroup
		want string
	}{
		{podGroup{Namespace: "ns", Name: "job:train", Kind: KindJob}, "batch/v1 Job ns/train"},
		{podGroup{Namespace: "ns", Name: "jobset:pt", Kind: KindJobSet}, "jobset.x-k8s.io/v1alpha2 JobSet ns/pt"},
		{podGroup{Namespace: "ns", Name: "lws:serve:3", Kind: KindLWS}, "leaderworkerset.x-k8s.io/v1 LeaderWorkerSet ns/serve"},
		{podGroup{Namespace: "ns", Name: "pg", Kind: KindCoscheduling}, ""},
	} {
		got := ""
		if r := ownerRef(&tc.g); r != nil {
			got = r.APIVersion + " " + r.Kind + " " + r.Namespace + "/" + r.Name
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.g.Name, got, tc.want)
		}
	}
}

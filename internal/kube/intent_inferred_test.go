package kube

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// inferredGangEnv is four 8-GPU nodes of one rack and a gang of four
// 8-GPU pods inferred from its owner, of the kind asked for, with no
// PodGroup to record its placement on: an indexed Job (parallelism =
// completions = 4), a JobSet of 2 x 2, or a LeaderWorkerSet group of
// size 4. (No controller runs here: the test makes the pods as it
// would.) The scheduler keeps its memory, and so the record, in a
// ConfigMap, as deploy/ runs it. It returns the config and the group's
// name.
func inferredGangEnv(t *testing.T, kind string) (*env, Config, string) {
	e := newEnv(t)
	for i := range 4 {
		e.node(fmt.Sprintf("ig-%d", i), 8, map[string]string{"corral.test/rack": "r1"})
	}
	var group string
	switch kind {
	case KindJob:
		j := e.indexedJob("jgang", 4)
		for i := range 4 {
			e.create(jobPod(j, i, 8))
		}
		group = "job:jgang"
	case KindJobSet:
		e.otherCRDs()
		e.object(JobSetResource, "JobSet", "pt", map[string]any{"replicatedJobs": []any{
			map[string]any{"name": "workers", "replicas": int64(2), "template": map[string]any{"spec": map[string]any{"parallelism": int64(2), "completions": int64(2)}}},
		}}, nil)
		for i := range 4 {
			p := pod(fmt.Sprintf("pt-workers-%d-%d", i/2, i%2), 8)
			p.Labels[LabelJobSetName] = "pt"
			e.create(p)
		}
		group = "jobset:pt"
	case KindLWS:
		e.otherCRDs()
		lws := schema.GroupVersionResource{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}
		e.object(lws, "LeaderWorkerSet", "serve", map[string]any{"replicas": int64(1), "leaderWorkerTemplate": map[string]any{"size": int64(4)}}, nil)
		for i, name := range []string{"serve-0", "serve-0-1", "serve-0-2", "serve-0-3"} {
			p := annotated(pod(name, 8), AnnotationLWSSize, "4")
			p.Labels[LabelLWSName], p.Labels[LabelLWSGroupIndex] = "serve", "0"
			p.Labels["leaderworkerset.sigs.k8s.io/worker-index"] = fmt.Sprint(i)
			e.create(p)
		}
		group = "lws:serve:0"
	default:
		t.Fatalf("no gang of kind %q", kind)
	}
	cfg := e.config()
	cfg.UnitMemoryConfigMap = leaseNamespace + "/" + e.ns + "-memory"
	t.Cleanup(func() {
		_ = e.c.Client.CoreV1().ConfigMaps(leaseNamespace).Delete(context.Background(), e.ns+"-memory", metav1.DeleteOptions{})
	})
	return e, cfg, group
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

// TestInferredGangLeaderDiesBetweenBinds kills the leader after k of the
// 4 bindings of a gang inferred from its owner (an indexed Job at every
// k; a JobSet and a LeaderWorkerSet group after 2), then changes the world
// as the case says and runs one cycle of a new leader: the gang is whole
// or not bound at all, and the record is gone. Before, such a gang was
// bound without a record, and a new leader left it half-bound, its other
// pods waiting for the gang itself to end.
func TestInferredGangLeaderDiesBetweenBinds(t *testing.T) {
	kills := map[string][]int{KindJob: {0, 1, 2, 3}, KindJobSet: {2}, KindLWS: {2}}
	for _, kind := range []string{KindJob, KindJobSet, KindLWS} {
		for _, c := range []struct {
			name   string
			change func(e *env)
			want   int
		}{
			{"nothing changed", func(*env) {}, 4},
			{"a pending member deleted", func(e *env) { e.deletePod(e.pendingMember()) }, 0},
		} {
			for _, k := range kills[kind] {
				t.Run(fmt.Sprintf("%s/%s/after %d binds", kind, c.name, k), func(t *testing.T) {
					e, cfg, group := inferredGangEnv(t, kind)
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
					if want := bindingKeyPrefix + e.ns + "_" + strings.ReplaceAll(group, ":", "_"); key != want {
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

package kube

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/sched"
)

// cohortQueue makes a Queue of this test with a GPU quota in a cohort.
func (e *env) cohortQueue(name string, gpus int64, cohort string) string {
	e.t.Helper()
	name = e.ns + "-" + name
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "corral.sh/v1alpha1", "kind": "Queue", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"tenant": name, "quota": map[string]any{"gpus": gpus}, "cohort": e.ns + "-" + cohort}}}
	ctx := context.Background()
	if _, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("queue %s: %v", name, err)
	}
	e.t.Cleanup(func() { _ = e.c.Dynamic.Resource(QueueResource).Delete(ctx, name, metav1.DeleteOptions{}) })
	return name
}

// A pod stopped to give lent quota back may not borrow again for the
// reborrow back-off, and a new leader knows it: the core's memory of units
// is in the API server (--memory-configmap), not in the replica that
// preempted. Before, the new leader started from nothing, and the pod,
// created again under its name, borrowed at once.
func TestLeaderChangeKeepsTheReborrowBackOff(t *testing.T) {
	e := newEnv(t)
	e.node("mem-0", 8, nil)
	owner, borrower := e.cohortQueue("owner", 4, "lab"), e.cohortQueue("borrower", 4, "lab")
	cfg := e.configNoGrace()
	cfg.ReclaimPatience = -1 // reclaim at once
	cfg.UnitMemoryConfigMap = leaseNamespace + "/" + e.ns + "-memory"
	inQ := func(name string, gpus int, q string) {
		p := pod(name, gpus)
		p.Labels[LabelQueue] = q
		e.create(p)
	}
	stopA := e.elected("a", cfg)
	inQ("big", 6, borrower) // borrows 2 of the owner's 4
	e.waitBound("big")
	inQ("claim", 4, owner) // the owner takes its quota back
	e.waitBound("claim")
	if got := e.getPodOrNil("big"); got != nil {
		t.Fatalf("big still there (on %q), want it preempted for claim", got.Spec.NodeName)
	}
	stored := e.storedMemory(cfg.UnitMemoryConfigMap, "pod."+e.ns+"_big")
	if stored.Preemptions != 1 || stored.NoBorrowUntil.Before(time.Now().Add(5*time.Minute)) {
		t.Fatalf("stored memory of big %+v, want 1 preemption and a back-off of about 10 minutes", stored)
	}

	now := int64(0) // no kubelet runs to finish it
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(context.Background(), "claim", metav1.DeleteOptions{GracePeriodSeconds: &now}); err != nil {
		t.Fatal(err)
	}
	stopA() // the leader goes away before big is submitted again
	e.elected("b", cfg)
	e.waitHolder("b")
	e.waitQueueStatus(owner, 0, 0, 0, 0) // the owner lends its 4 again
	inQ("big", 6, borrower)              // its controller creates it again, under its name
	e.waitUnschedulable("big", "may not borrow until")
	time.Sleep(2 * cfg.Interval) // more cycles of the new leader
	if p := e.getPodOrNil("big"); p == nil || p.Spec.NodeName != "" {
		t.Fatalf("big %v, want it pending through the back-off", p)
	}
	inQ("small", 4, borrower) // within its own quota it runs
	e.waitBound("small")
}

// getPodOrNil returns the pod of this test, or nil when it is not there.
func (e *env) getPodOrNil(name string) *corev1.Pod {
	e.t.Helper()
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return p
}

// storedMemory reads one unit's memory from the ConfigMap at
// "namespace/name", waiting until it is there.
func (e *env) storedMemory(at, key string) storedUnit {
	e.t.Helper()
	ns, name, _ := strings.Cut(at, "/")
	e.t.Cleanup(func() {
		_ = e.c.Client.CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	var u storedUnit
	e.eventually(func() error {
		cm, err := e.c.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return json.Unmarshal([]byte(cm.Data[key]), &u)
	})
	return u
}

// The store refuses what is not a unit's memory rather than reading it as
// nothing (a hand-edited or foreign ConfigMap), refuses a name the API
// server would, and a round trip through the real API server keeps what
// was written, deletions included.
func TestUnitMemoryStoreRoundTripAndBadInput(t *testing.T) {
	for _, at := range []string{"corral-system", "/x", "Corral_System/x", "ns/Not A Name"} {
		if _, err := newMemoryStore(nil, at); err == nil {
			t.Errorf("%q accepted as namespace/name", at)
		}
	}
	e := newEnv(t)
	ctx := context.Background()
	st, err := newMemoryStore(e.c.Client, e.ns+"/memory")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.load(ctx); err != nil || len(got) != 0 {
		t.Fatalf("no ConfigMap: %v, %v; want an empty memory", got, err)
	}
	until := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if err := st.save(ctx, []sched.Change{
		{Unit: "group " + e.ns + "/g", Remembered: sched.Remembered{Preemptions: 2, NoBorrowUntil: until}},
		{Unit: "pod " + e.ns + "/p", Remembered: sched.Remembered{Claimed: true}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.save(ctx, []sched.Change{{Unit: "pod " + e.ns + "/p", Gone: true}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.load(ctx)
	if want := map[string]sched.Remembered{"group " + e.ns + "/g": {Preemptions: 2, NoBorrowUntil: until}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %v, %v; want %v", got, err, want)
	}
	patch := []byte(`{"data":{"pod.x_y":"{\"unit\":\"pod other/z\"}"}}`)
	if _, err := e.c.Client.CoreV1().ConfigMaps(e.ns).Patch(ctx, "memory", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.load(ctx); err == nil || !strings.Contains(err.Error(), "pod.x_y") {
		t.Fatalf("a value under another unit's key: %v; want it refused, naming the key", err)
	}
}

// The last hour's defrag moves read back through the real API server
// beside the units' memory, which does not take the key for a unit's;
// a hand-edited value is refused, naming the key, and a new leader then
// counts only its own moves; moves older than an hour, or stamped in the
// future, do not count.
func TestDefragMovesStoreRoundTripAndBadInput(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	st, err := newMemoryStore(e.c.Client, e.ns+"/memory")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.loadMoves(ctx); err != nil || got != nil {
		t.Fatalf("no ConfigMap: %v, %v; want no moves", got, err)
	}
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	moves := []time.Time{now.Add(-90 * time.Minute), now.Add(-30 * time.Minute), now.Add(-10 * time.Minute)}
	if err := st.saveMoves(ctx, moves); err != nil {
		t.Fatal(err)
	}
	if err := st.save(ctx, []sched.Change{{Unit: "pod " + e.ns + "/p", Remembered: sched.Remembered{Preemptions: 1}}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.loadMoves(ctx)
	if err != nil || !reflect.DeepEqual(got, moves) {
		t.Fatalf("read back %v, %v; want %v", got, err, moves)
	}
	if units, err := st.load(ctx); err != nil || len(units) != 1 {
		t.Fatalf("units beside the moves: %v, %v; want the one unit", units, err)
	}
	if recent := recentMoves(append(got, now.Add(time.Hour)), now); !reflect.DeepEqual(recent, moves[1:]) {
		t.Fatalf("moves of the last hour: %v, want %v", recent, moves[1:])
	}
	patch := []byte(`{"data":{"defrag-moves":"three moves, roughly"}}`)
	if _, err := e.c.Client.CoreV1().ConfigMaps(e.ns).Patch(ctx, "memory", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.loadMoves(ctx); err == nil || !strings.Contains(err.Error(), defragMovesKey) {
		t.Fatalf("a value that is not a list of times: %v; want it refused, naming the key", err)
	}
	s := &Scheduler{cfg: Config{Defrag: true, Now: func() time.Time { return now }}, unitsStore: st, moved: moves[2:], log: slog.New(slog.DiscardHandler)}
	s.restoreMoves(ctx)
	if !reflect.DeepEqual(s.moved, moves[2:]) {
		t.Fatalf("after a refused read the replica counts %v, want its own %v", s.moved, moves[2:])
	}
}

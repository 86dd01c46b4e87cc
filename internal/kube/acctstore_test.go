package kube

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// elected runs a replica with cfg until the returned function stops it
// (giving the Lease up).
func (e *env) elected(id string, cfg Config) func() {
	s := e.newScheduler(cfg)
	el := Election{Namespace: leaseNamespace, Name: e.ns, Identity: id,
		LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 200 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.RunElected(ctx, el); err != nil {
			e.t.Errorf("%s: %v", id, err)
		}
	}()
	stop := func() { cancel(); <-done }
	e.t.Cleanup(stop)
	return stop
}

// setPhase sets a pod's phase, as its kubelet would.
func (e *env) setPhase(name string, phase corev1.PodPhase) {
	e.t.Helper()
	ctx := context.Background()
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	p.Status.Phase = phase
	if _, err := e.c.Client.CoreV1().Pods(e.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// waitRecords waits until the log in the API server holds n records of
// event, and returns them all.
func (e *env) waitRecords(at, event string, n int) []Record {
	e.t.Helper()
	var recs []Record
	e.eventually(func() error {
		var err error
		if recs, err = ReadAccounting(context.Background(), e.c.Client, at); err != nil {
			return err
		}
		got := 0
		for _, r := range recs {
			if r.Event == event {
				got++
			}
		}
		if got < n {
			return fmt.Errorf("%d %s records in %s, want %d", got, event, at, n)
		}
		return nil
	})
	return recs
}

// accountingRun binds three pods of 4 GPUs at t0; at t0+100 s one
// succeeds and one is deleted, and the third succeeds at t0+200 s. With
// handover, the replica that bound them stops at t0+100 s, the first two
// end while no replica leads, and a second replica takes over. The
// records, less what names the namespace, are returned in a fixed order.
func accountingRun(t *testing.T, handover bool) []Record {
	e := newEnv(t)
	e.node(fmt.Sprintf("acctlog-%v", handover), 12, nil)
	at := leaseNamespace + "/" + e.ns
	clock := &fakeClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	cfg := e.config()
	cfg.Now, cfg.AccountingConfigMaps = clock.Now, at
	stopA := e.elected("a", cfg)
	e.create(pod("done", 4), pod("gone", 4), pod("late", 4))
	e.waitBound("done", "gone", "late")
	e.waitRecords(at, "start", 3)
	clock.Add(100 * time.Second)
	if handover {
		stopA() // the leader goes; what ends next ends with no leader
	}
	e.setPhase("done", corev1.PodSucceeded)
	zero := int64(0)
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(context.Background(), "gone", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if handover {
		e.elected("b", cfg)
		e.waitHolder("b")
	}
	e.waitRecords(at, "end", 2)
	clock.Add(100 * time.Second)
	e.setPhase("late", corev1.PodSucceeded)
	recs := e.waitRecords(at, "end", 3)
	for i := range recs {
		recs[i].Pod = recs[i].Pod[len(e.ns)+1:]
		recs[i].Tenant, recs[i].Node = "", ""
		recs[i].WaitSeconds = 0 // the real time from creation to binding
	}
	sort.SliceStable(recs, func(a, b int) bool {
		if recs[a].Event != recs[b].Event {
			return recs[a].Event < recs[b].Event
		}
		return recs[a].Pod < recs[b].Pod
	})
	return recs
}

// The accounting log lives in the API server: a replica that takes over
// from a leader reads it back and continues it, recording the ends of pods
// that finished or went away while no replica led, with run times from the
// starts the first leader wrote. The log after a leader change is the log
// of one continuous run.
func TestAccountingContinuesAcrossLeaders(t *testing.T) {
	var one, two []Record
	// Subtests, so that each run's replicas stop before the next starts.
	t.Run("one-leader", func(t *testing.T) { one = accountingRun(t, false) })
	t.Run("leader-change", func(t *testing.T) { two = accountingRun(t, true) })
	if !reflect.DeepEqual(one, two) {
		t.Errorf("log with a leader change differs from one run:\none: %+v\ntwo: %+v", one, two)
	}
	want := map[string]float64{"done": 400, "gone": 400, "late": 800}
	for _, r := range two {
		if r.Event == "end" && r.GPUSeconds != want[r.Pod] {
			t.Errorf("end of %s: %v GPU-seconds, want %v (%+v)", r.Pod, r.GPUSeconds, want[r.Pod], r)
		}
	}
	if len(two) != 6 {
		t.Errorf("%d records, want 3 starts and 3 ends: %+v", len(two), two)
	}
}

// What the API server would refuse never wedges the log: a key that is
// not a ConfigMap key is left out before it is queued, and a batch the
// API server refuses (here a record larger than a ConfigMap may hold) is
// written record by record, the refused one reported and left out, the
// others written, nothing left to retry.
func TestAccountingLogSkipsWhatTheAPIServerRefuses(t *testing.T) {
	e := newEnv(t)
	at := leaseNamespace + "/" + e.ns
	a, err := newAPILog(e.deployed().Client, at, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	a.add("fault with a space", Record{Event: "fault"})
	a.add(recordKey("start", "ok"), Record{Event: "start", Pod: "ns/ok"})
	a.addLine(recordKey("start", "huge"), []byte(`"`+strings.Repeat("x", 1100<<10)+`"`))
	if err := a.flush(context.Background()); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if len(a.queue) != 0 || a.dropped.Load() != 1 {
		t.Errorf("%d records queued, %d dropped: want none left and the huge one dropped", len(a.queue), a.dropped.Load())
	}
	recs, err := ReadAccounting(context.Background(), e.c.Client, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Pod != "ns/ok" {
		t.Errorf("records %+v, want the one valid record", recs)
	}
	if _, err := newAPILog(e.c.Client, "corral-system/Bad Prefix", testLogger()); err == nil {
		t.Error("a prefix no ConfigMap name or label value may hold was taken")
	}
}

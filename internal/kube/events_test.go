package kube

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
)

// Events are written by workers of their own, off the bind path: with every
// event request stuck, all pods still bind (writing events in the binding
// workers, as corral did, stalled them after the first 16).
func TestBindingNeverWaitsForEvents(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		e.node(fmt.Sprintf("noevents-%d", i), 8, nil)
	}
	release := make(chan struct{})
	rc := rest.CopyConfig(e.deployed().Config)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.Contains(r.URL.Path, "/events") {
				<-release
			}
			return rt.RoundTrip(r)
		})
	})
	client, dyn := kubernetes.NewForConfigOrDie(rc), dynamic.NewForConfigOrDie(rc)
	s := New(client, dyn, e.config(), testLogger())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	t.Cleanup(func() { close(release); cancel(); <-done })
	names := make([]string, 40)
	for i := range names {
		names[i] = fmt.Sprintf("p-%02d", i)
		e.create(pod(names[i], 1))
	}
	e.waitBound(names...)
}

// A pending reason is written when it changes, and its FailedScheduling
// events are aggregated: the same reason again raises the count of the
// event written before instead of adding one.
func TestPendingReasonWrittenOnChangeAndEventsAggregated(t *testing.T) {
	e := newEnv(t)
	e.node("agg-0", 8, nil)
	e.node("agg-1", 8, nil)
	q := e.createQueue("agg", 8)
	s, _ := e.start(e.config())
	inQueue := func(p *corev1.Pod) *corev1.Pod { p.Labels[LabelQueue] = q; return p }
	e.create(inQueue(pod("holder", 4)))
	e.waitBound("holder")
	e.create(inQueue(pod("big", 8)))
	roomFor4 := "has room for 4 GPUs"
	e.waitReason("big", ReasonWaitingForQuota, roomFor4)
	time.Sleep(4 * e.config().Interval) // cycles with nothing new to say
	if n := s.Stats().Unfit; n != 1 {
		t.Errorf("%d pending reasons written for one unchanged reason, want 1", n)
	}
	e.create(inQueue(pod("more", 2)))
	e.waitBound("more")
	e.waitReason("big", ReasonWaitingForQuota, "has room for 2 GPUs")
	zero := int64(0)
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(context.Background(), "more", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	e.waitReason("big", ReasonWaitingForQuota, roomFor4)
	e.eventually(func() error {
		evs, err := e.c.Client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		same := 0
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Name == "big" && ev.Reason == EventFailedScheduling && strings.Contains(ev.Message, roomFor4) {
				same++
				if ev.Count != 2 {
					return fmt.Errorf("event %q has count %d, want 2", ev.Message, ev.Count)
				}
			}
		}
		if same != 1 {
			return fmt.Errorf("%d FailedScheduling events of big say %q, want one, counted twice", same, roomFor4)
		}
		return nil
	})
}

// A burst of events (a Scheduled event for each pod of a drain) is
// written whole, late rather than dropped: client-go's broadcaster drops
// what comes past its thousand queued. The same event again raises the
// count of the one written.
func TestEveryEventOfABurstIsWritten(t *testing.T) {
	client := fake.NewClientset()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newEventWriter(ctx, client, DefaultSchedulerName, testLogger(), time.Now)
	const burst = 2500 // past the 1,000 client-go's broadcaster queues
	for i := range burst {
		p := pod(fmt.Sprintf("burst-%04d", i), 1)
		p.Namespace, p.UID = "drain", types.UID(fmt.Sprintf("u-%d", i))
		w.Event(p, corev1.EventTypeNormal, EventScheduled, "Successfully assigned drain/"+p.Name+" to node-0")
	}
	again := pod("burst-0000", 1)
	again.Namespace, again.UID = "drain", "u-0"
	w.Event(again, corev1.EventTypeNormal, EventScheduled, "Successfully assigned drain/burst-0000 to node-0")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		evs, err := client.CoreV1().Events("drain").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		counted := int32(0)
		for _, ev := range evs.Items {
			counted += ev.Count
		}
		if len(evs.Items) == burst && counted == burst+1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events written (counts add to %d), want %d, one of them counted twice", len(evs.Items), counted, burst)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

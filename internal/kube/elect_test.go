package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runElected runs a replica until the returned function cancels it.
func (e *env) runElected(id string) (*Scheduler, func()) {
	s := e.newScheduler(e.config())
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
	return s, stop
}

func (e *env) waitHolder(id string) {
	e.t.Helper()
	e.eventually(func() error {
		l, err := e.c.Client.CoordinationV1().Leases(leaseNamespace).Get(context.Background(), e.ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != id {
			return fmt.Errorf("lease held by %v, want %s", l.Spec.HolderIdentity, id)
		}
		return nil
	})
}

func TestLeaderHandover(t *testing.T) {
	e := newEnv(t)
	for i := range 4 {
		e.node(fmt.Sprintf("lead-%d", i), 8, nil)
	}
	a, stopA := e.runElected("a")
	e.waitHolder("a")
	b, _ := e.runElected("b")
	var names []string
	for i := range 16 {
		names = append(names, fmt.Sprintf("w1-%d", i))
		e.create(pod(names[i], 1))
	}
	e.waitBound(names[0])
	stopA() // the leader goes away mid-run
	for i := range 16 {
		names = append(names, fmt.Sprintf("w2-%d", i))
		e.create(pod(names[16+i], 1))
	}
	e.waitHolder("b")
	e.waitBound(names...)
	sa, sb := a.Stats(), b.Stats()
	// Every pod is bound (waitBound) and no binding succeeded twice; a
	// binding cut short when a stopped may have landed without a reply.
	if n := sa.Binds + sb.Binds; n > int64(len(names)) || n+sa.Failures < int64(len(names)) {
		t.Errorf("a bound %d (%d failed), b bound %d: want %d in all, each pod once", sa.Binds, sa.Failures, sb.Binds, len(names))
	}
	if sb.Binds == 0 {
		t.Error("b bound nothing after taking over")
	}
	t.Logf("a: %+v, b: %+v", sa, sb)
	for node, gpus := range e.gpusPerNode() {
		if gpus > 8 {
			t.Errorf("node %s holds %d GPUs of 8", node, gpus)
		}
	}
}

package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Election says which Lease the replicas compete for, and how fast.
type Election struct {
	Namespace, Name string // the Lease
	Identity        string // this replica, unique among them
	LeaseDuration   time.Duration
	RenewDeadline   time.Duration
	RetryPeriod     time.Duration
}

// DefaultElection is the upstream scheduler's timing.
func DefaultElection(identity string) Election {
	return Election{Namespace: "kube-system", Name: "corral-scheduler", Identity: identity,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
}

// RunElected starts the informers, then schedules only while this replica
// holds the Lease. It returns nil when ctx ends, giving the Lease up so that
// another replica takes over at once, and an error when the Lease is lost.
func (s *Scheduler) RunElected(ctx context.Context, e Election) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: e.Namespace, Name: e.Name},
		Client:     s.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.Identity},
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   e.LeaseDuration,
		RenewDeadline:   e.RenewDeadline,
		RetryPeriod:     e.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            e.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				s.log.Info("leading", "identity", e.Identity)
				if err := s.loop(ctx); err != nil {
					s.log.Error("scheduling", "err", err)
				}
			},
			OnStoppedLeading: func() { s.log.Info("stopped leading", "identity", e.Identity) },
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	le.Run(ctx)
	if ctx.Err() == nil {
		return errors.New("leader election: lost the lease") // let the replica restart
	}
	return nil
}

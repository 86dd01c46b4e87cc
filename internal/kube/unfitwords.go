package kube

import (
	"strings"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/sched"
)

// The core says why a pod does not fit as codes with node counts
// (gang.Unfit); this face words them as a Kubernetes user knows the
// nodes. The taints the face adds for the core (DRA-only and time-sliced
// nodes, node selectors) are none that kubectl describe node shows, so
// they are told as what they stand for.

// nodePhrase words why nodes hold none of the pods' tasks.
func (s *snapshot) nodePhrase(c gang.NodeCount) string {
	if c.Reason != gang.ReasonTaint {
		return c.Reason.String()
	}
	switch c.Detail {
	case draOnly:
		return "node offers its GPUs only through DRA (ResourceClaims), which the pod does not use"
	case sharedOnly:
		return "node offers only time-sliced GPU shares (" + string(ResourceShared) + "), which the pod does not ask for"
	}
	for _, sel := range s.selectors {
		if sel.taint == c.Detail {
			return "node does not match the pod's nodeSelector " + sel.key
		}
	}
	return c.Reason.String() // a taint the node shows: the core's words, as the twin scripts pin
}

// unfitCause is why a waiting unit does not fit, in this face's words:
// the core's codes worded by nodePhrase, or its words when it gave no
// codes (a unit the face blocked).
func (s *snapshot) unfitCause(w sched.Wait) string {
	if w.Unfit == nil {
		return w.Cause
	}
	return strings.Join(w.Unfit.Format(s.nodePhrase), "; ")
}

// unfitMessage is a capacity wait's message: why it does not fit, then
// what the cycle does about it.
func (s *snapshot) unfitMessage(w sched.Wait) string {
	msg := s.unfitCause(w)
	if w.Then != "" {
		msg += "; " + w.Then
	}
	return msg
}

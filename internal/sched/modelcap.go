package sched

import (
	"fmt"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/gang"
	gpucat "github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/queue"
)

// Model caps (queue.ModelCap): a queue may cap the GPUs of one model its
// work holds, beside its GPU quota. A unit that allows several models is
// charged its model only once placed (Charger.Placed), so before placing
// it the cycle narrows the models it may use to those whose caps have
// room for it: it lands where its queue may hold it, or waits for quota
// naming the caps.

// overModelCaps reports, and records, that no GPU model u allows has room
// under its queue's caps; otherwise u places on the models that have.
func (c *cycle) overModelCaps(u *Unit) bool {
	j, why := c.withinModelCaps(u)
	if why != "" {
		c.wait(u, CodeQuota, why)
		return true
	}
	if j != nil {
		u.Job = j
	}
	return false
}

// withinModelCaps is u's job narrowed to the GPU models whose caps in its
// queue have room for its GPUs, or nil when nothing narrows it; why is
// set when no model it allows has room.
func (c *cycle) withinModelCaps(u *Unit) (narrowed *job.Job, why string) {
	if c.snap.Book == nil || u.Queue == "" {
		return nil, ""
	}
	spec, ok := c.snap.Book.Spec(u.Queue)
	if !ok || !hasModelCaps(spec.Nominal) {
		return nil, ""
	}
	var need int64
	for f, v := range u.Need {
		if f.IsGPU() {
			need += v
		}
	}
	if need == 0 {
		return nil, ""
	}
	var room, full []string
	for _, model := range c.fleetModels() {
		if !gang.AllowsModel(u.Job, model) {
			continue
		}
		f := queue.ModelCap(model)
		if h := c.snap.Book.Headroom(u.Queue, f); h >= need {
			room = append(room, model)
		} else {
			full = append(full, fmt.Sprintf("%s has room for %s of its %s", model, Amount(f, h), Amount(f, spec.Nominal[f])))
		}
	}
	switch {
	case len(full) == 0:
		return nil, ""
	case len(room) == 0:
		return nil, fmt.Sprintf("queue %s caps GPUs per model, and no model this allows has room for its %s: %s",
			u.Queue, Amount(queue.Flavor{}, need), strings.Join(full, "; "))
	}
	j := *u.Job
	j.Groups = slices.Clone(u.Job.Groups)
	for i := range j.Groups {
		if j.Groups[i].Task.Kind() != job.CPUOnly {
			j.Groups[i].Task.Models = room
		}
	}
	return &j, ""
}

// hasModelCaps reports whether a queue's quota caps any GPU model.
func hasModelCaps(nominal queue.Amounts) bool {
	for f := range nominal {
		if f.IsModelCap() {
			return true
		}
	}
	return false
}

// fleetModels are the GPU models of the fleet's nodes, found once per
// cycle.
func (c *cycle) fleetModels() []string {
	if c.models == nil {
		c.models = append([]string{}, c.snap.State.Fleet().GPUModels()...)
	}
	return c.models
}

// catalogName is a GPU model's catalog name, or the name itself when the
// catalog does not know it.
func catalogName(model string) string {
	if m, err := gpucat.Lookup(model); err == nil {
		return m.Name
	}
	return model
}

package cost

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/gpu"
)

// Usage is what one slice of a fleet bought and what became of it: the
// GPU-hours of one pool on one capacity type, of one GPU model, charged to
// one tenant and class of work (either may be empty for capacity no one
// held).
//
// Bought is every GPU-hour paid for. Of these, Used did work that was kept;
// Idle stood free while some pending request could have used it (or none
// was pending); Fragmented stood free in pieces no pending request could
// use; PreemptedLost and InterruptedLost did work that was thrown away when
// a job was preempted or a spot node was taken back, back to its last
// checkpoint. The parts need not add up to Bought; what they leave out is
// reported as unaccounted.
//
// Covered, of Bought, was paid at the rate of a discount commitment,
// CoveredBy (a capacity type such as reserved-1y: a Savings Plan,
// reserved instance or CUD covering this usage while capacity of its own
// stood unused); the rest at the row's own price.
type Usage struct {
	Pool, CapacityType, GPUModel, Tenant, Class string

	BoughtGPUH, UsedGPUH, IdleGPUH, FragmentedGPUH, PreemptedLostGPUH, InterruptedLostGPUH float64

	CoveredGPUH float64
	CoveredBy   string
}

// Line is the cost of a group of usage rows.
type Line struct {
	Key                 string   `json:"key"`
	CostUSD             float64  `json:"cost_usd"`
	BoughtGPUH          float64  `json:"bought_gpu_hours"`
	UsedGPUH            float64  `json:"used_gpu_hours"`
	WastedGPUH          float64  `json:"wasted_gpu_hours"` // bought - used
	IdleGPUH            float64  `json:"idle_gpu_hours"`
	FragmentedGPUH      float64  `json:"fragmented_gpu_hours"`
	PreemptedLostGPUH   float64  `json:"preempted_lost_gpu_hours"`
	InterruptedLostGPUH float64  `json:"interrupted_lost_gpu_hours"`
	UnaccountedGPUH     float64  `json:"unaccounted_gpu_hours"`       // wasted - idle - fragmented - lost
	CoveredGPUH         float64  `json:"covered_gpu_hours,omitempty"` // of bought, paid at a discount commitment's rate
	USDPerUsefulGPUH    *float64 `json:"usd_per_useful_gpu_hour"`     // nil when nothing was used
	WastedUSD           float64  `json:"wasted_usd"`                  // cost of the wasted GPU-hours
}

// Bill is the cost of a set of usage rows, grouped four ways, with the
// prices it used.
type Bill struct {
	Total      Line          `json:"total"`
	ByPool     []Line        `json:"by_pool"`
	ByCapacity []Line        `json:"by_capacity_type"`
	ByTenant   []Line        `json:"by_tenant"`
	ByClass    []Line        `json:"by_class"`
	Rows       []RowCost     `json:"rows"`
	Prices     []price.Price `json:"prices"`
}

// RowCost is the cost of one usage row.
type RowCost struct {
	Pool         string  `json:"pool"`
	CapacityType string  `json:"capacity_type"`
	GPUModel     string  `json:"gpu_model"`
	Tenant       string  `json:"tenant"`
	Class        string  `json:"class"`
	CostUSD      float64 `json:"cost_usd"`
}

// Unattributed keys rows with an empty tenant or class.
const Unattributed = "(none)"

// Price prices usage against the catalog. families chooses the offer per GPU
// model (a family or instance name); a model not in it gets the catalog's
// first offer. Each row costs BoughtGPUH at its capacity type's price per
// GPU-hour. Rows are grouped in order of first appearance.
func Price(usage []Usage, cat *price.Catalog, families map[string]string) (*Bill, error) {
	b := &Bill{Total: Line{Key: "total"}}
	seen := map[string]bool{}
	var errs []error
	for i, u := range usage {
		p, err := rowPrice(u, cat, families)
		if err != nil {
			errs = append(errs, fmt.Errorf("usage %d (%s %s %s): %w", i, u.Pool, u.GPUModel, u.CapacityType, err))
			continue
		}
		if k := p.Instance + "/" + string(p.Capacity); !seen[k] {
			seen[k] = true
			b.Prices = append(b.Prices, p)
		}
		cost := (u.BoughtGPUH - u.CoveredGPUH) * p.USDPerGPUHour
		if u.CoveredGPUH > 0 {
			q, err := rowPrice(Usage{CapacityType: u.CoveredBy, GPUModel: u.GPUModel}, cat, families)
			if err != nil {
				errs = append(errs, fmt.Errorf("usage %d (%s %s): covered by %s: %w", i, u.Pool, u.GPUModel, u.CoveredBy, err))
				continue
			}
			cost += u.CoveredGPUH * q.USDPerGPUHour
		}
		b.Rows = append(b.Rows, RowCost{Pool: u.Pool, CapacityType: u.CapacityType, GPUModel: p.GPU, Tenant: u.Tenant, Class: u.Class, CostUSD: cost})
		b.Total.add(u, cost)
		b.ByPool = addTo(b.ByPool, u.Pool, u, cost)
		b.ByCapacity = addTo(b.ByCapacity, u.CapacityType, u, cost)
		b.ByTenant = addTo(b.ByTenant, u.Tenant, u, cost)
		b.ByClass = addTo(b.ByClass, u.Class, u, cost)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, ls := range [][]Line{b.ByPool, b.ByCapacity, b.ByTenant, b.ByClass} {
		for i := range ls {
			ls[i].finish()
		}
	}
	b.Total.finish()
	return b, nil
}

func rowPrice(u Usage, cat *price.Catalog, families map[string]string) (price.Price, error) {
	c := price.Capacity(u.CapacityType)
	if !slices.Contains(price.Capacities, c) {
		return price.Price{}, fmt.Errorf("unknown capacity type %q (known: on-demand, spot, reserved-1y, reserved-3y, reserved-block)", u.CapacityType)
	}
	if u.BoughtGPUH < 0 || u.UsedGPUH < 0 || u.CoveredGPUH < 0 {
		return price.Price{}, errors.New("negative GPU-hours")
	}
	if u.CoveredGPUH > u.BoughtGPUH {
		return price.Price{}, fmt.Errorf("%g GPU-hours covered of %g bought", u.CoveredGPUH, u.BoughtGPUH)
	}
	fam, ok := families[u.GPUModel]
	if m, err := gpu.Lookup(u.GPUModel); err == nil && !ok {
		fam = families[m.Name]
	}
	offer, err := cat.Find(u.GPUModel, fam)
	if err != nil {
		return price.Price{}, err
	}
	return offer.PerGPUHour(c)
}

func addTo(ls []Line, key string, u Usage, cost float64) []Line {
	if strings.TrimSpace(key) == "" {
		key = Unattributed
	}
	i := slices.IndexFunc(ls, func(l Line) bool { return l.Key == key })
	if i < 0 {
		ls = append(ls, Line{Key: key})
		i = len(ls) - 1
	}
	ls[i].add(u, cost)
	return ls
}

func (l *Line) add(u Usage, cost float64) {
	l.CostUSD += cost
	l.BoughtGPUH += u.BoughtGPUH
	l.UsedGPUH += u.UsedGPUH
	l.IdleGPUH += u.IdleGPUH
	l.FragmentedGPUH += u.FragmentedGPUH
	l.PreemptedLostGPUH += u.PreemptedLostGPUH
	l.InterruptedLostGPUH += u.InterruptedLostGPUH
	l.CoveredGPUH += u.CoveredGPUH
}

// finish derives waste and the cost of a useful GPU-hour.
func (l *Line) finish() {
	l.WastedGPUH = l.BoughtGPUH - l.UsedGPUH
	l.UnaccountedGPUH = l.WastedGPUH - l.IdleGPUH - l.FragmentedGPUH - l.PreemptedLostGPUH - l.InterruptedLostGPUH
	l.USDPerUsefulGPUH = nil
	if l.BoughtGPUH > 0 {
		l.WastedUSD = l.CostUSD * l.WastedGPUH / l.BoughtGPUH
	}
	if l.UsedGPUH > 0 {
		v := l.CostUSD / l.UsedGPUH
		l.USDPerUsefulGPUH = &v
	}
}

package alloc

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// Idle is the owner of the idle line: capacity paid for and not used.
const Idle = "__idle__"

// Record is one run that held GPUs: a job or a pod, its owner (a tenant,
// queue or namespace), the GPU model it ran on and the GPUs it held (a
// fraction for a MIG slice or a share of a GPU), from Start to End.
type Record struct {
	ID, Owner, Model string
	GPUs             float64
	Start, End       time.Time
}

// IdleMode says what becomes of idle cost.
type IdleMode string

// SharedMode says how shared cost is split.
type SharedMode string

const (
	IdleSeparate   IdleMode   = "separate" // its own __idle__ line
	IdleShare      IdleMode   = "share"    // shared by used cost, per model
	SharedEven     SharedMode = "even"     // the same to every owner
	SharedWeighted SharedMode = "weighted" // by allocated cost
)

// Input is what a bill is made from.
type Input struct {
	Start, End time.Time          // the period billed
	Records    []Record           // runs; the part of each inside the period counts
	Capacity   map[string]float64 // GPUs per model paid for over the whole period
	Prices     map[string]float64 // USD per GPU-hour per model
	Idle       IdleMode           // default IdleSeparate
	SharedUSD  float64            // overhead for the period, split among owners
	Shared     SharedMode         // default SharedWeighted
}

// Line is one owner's cost on one GPU model; Model is empty on the line
// that carries an owner's part of the shared cost.
type Line struct {
	Owner    string  `json:"owner"`
	Model    string  `json:"gpu_model,omitempty"`
	GPUHours float64 `json:"gpu_hours"` // used; on the __idle__ line, idle
	Used     Cents   `json:"used_cents"`
	Idle     Cents   `json:"idle_cents"`
	Shared   Cents   `json:"shared_cents"`
}

// Total is the line's cost.
func (l Line) Total() Cents { return l.Used + l.Idle + l.Shared }

// Model is one GPU model's capacity over the period and its price.
type Model struct {
	Model         string  `json:"gpu_model"`
	GPUs          float64 `json:"gpus"`
	USDPerGPUHour float64 `json:"usd_per_gpu_hour"`
	CapacityGPUH  float64 `json:"capacity_gpu_hours"`
	UsedGPUH      float64 `json:"used_gpu_hours"`
	Cost          Cents   `json:"cost_cents"`
}

// Bill is the cost of a period per owner and model: Lines sorted by
// owner then model, each owner's shared line after its models and the
// __idle__ lines last; Total is the capacity cost
// plus the shared cost, and the lines add up to it.
type Bill struct {
	Start  time.Time  `json:"start"`
	End    time.Time  `json:"end"`
	Idle   IdleMode   `json:"idle"`
	Shared SharedMode `json:"shared"`
	Models []Model    `json:"models"`
	Lines  []Line     `json:"lines"`
	Total  Cents      `json:"total_cents"`
}

// ErrInput is wrapped by every error about the input.
var ErrInput = errors.New("cannot allocate")

// Allocate makes the bill of in.
func Allocate(in Input) (*Bill, error) {
	if !in.End.After(in.Start) {
		return nil, fmt.Errorf("%w: the period ends (%s) before it starts (%s)", ErrInput, in.End.Format(time.RFC3339), in.Start.Format(time.RFC3339))
	}
	in.Idle, in.Shared = cmp(in.Idle, IdleSeparate), cmp(in.Shared, SharedWeighted)
	if in.Idle != IdleSeparate && in.Idle != IdleShare {
		return nil, fmt.Errorf("%w: idle %q (want share or separate)", ErrInput, in.Idle)
	}
	if in.Shared != SharedEven && in.Shared != SharedWeighted {
		return nil, fmt.Errorf("%w: shared %q (want even or weighted)", ErrInput, in.Shared)
	}
	if in.SharedUSD < 0 {
		return nil, fmt.Errorf("%w: shared cost %g is negative", ErrInput, in.SharedUSD)
	}
	used, err := usedHours(in)
	if err != nil {
		return nil, err
	}
	b := &Bill{Start: in.Start, End: in.End, Idle: in.Idle, Shared: in.Shared}
	for _, m := range modelNames(in.Capacity, used) {
		mb, lines, err := billModel(in, m, used[m])
		if err != nil {
			return nil, err
		}
		b.Models = append(b.Models, mb)
		b.Lines = append(b.Lines, lines...)
		b.Total += mb.Cost
	}
	shared := toCents(in.SharedUSD)
	b.Lines = append(b.Lines, sharedLines(b.Lines, shared, in.Shared)...)
	b.Total += shared
	sortLines(b.Lines)
	return b, nil
}

func cmp[T ~string](v, def T) T {
	if v == "" {
		return def
	}
	return v
}

// usedHours sums the GPU-hours each owner used of each model inside the
// period.
func usedHours(in Input) (map[string]map[string]float64, error) {
	used := map[string]map[string]float64{}
	for i, r := range in.Records {
		if r.GPUs < 0 || r.End.Before(r.Start) {
			return nil, fmt.Errorf("%w: record %d (%s): %g GPUs from %s to %s", ErrInput, i+1, r.ID, r.GPUs, r.Start.Format(time.RFC3339), r.End.Format(time.RFC3339))
		}
		if r.Owner == Idle {
			return nil, fmt.Errorf("%w: record %d (%s): owner %q is the idle line's name", ErrInput, i+1, r.ID, Idle)
		}
		from, to := later(r.Start, in.Start), earlier(r.End, in.End)
		if !to.After(from) || r.GPUs == 0 {
			continue
		}
		if used[r.Model] == nil {
			used[r.Model] = map[string]float64{}
		}
		used[r.Model][r.Owner] += r.GPUs * to.Sub(from).Hours()
	}
	return used, nil
}

// billModel divides one model's capacity cost into used, idle and its
// owners' lines.
func billModel(in Input, model string, used map[string]float64) (Model, []Line, error) {
	price, ok := in.Prices[model]
	if !ok || price <= 0 {
		return Model{}, nil, fmt.Errorf("%w: no price for GPU model %s (prices given for: %s)", ErrInput, model, strings.Join(slices.Sorted(maps.Keys(in.Prices)), ", "))
	}
	gpus, ok := in.Capacity[model]
	if !ok || gpus <= 0 {
		return Model{}, nil, fmt.Errorf("%w: no capacity for GPU model %s, which was used (capacity given for: %s)", ErrInput, model, strings.Join(slices.Sorted(maps.Keys(in.Capacity)), ", "))
	}
	hours := in.End.Sub(in.Start).Hours()
	m := Model{Model: model, GPUs: gpus, USDPerGPUHour: price, CapacityGPUH: gpus * hours}
	owners := slices.Sorted(maps.Keys(used))
	weights := make([]float64, len(owners))
	for i, o := range owners {
		weights[i] = used[o]
		m.UsedGPUH += used[o]
	}
	if m.UsedGPUH > m.CapacityGPUH*(1+1e-9) {
		return Model{}, nil, fmt.Errorf("%w: GPU model %s: %.4f GPU-hours used exceed the capacity of %g GPUs over %.4f hours (%.4f GPU-hours)",
			ErrInput, model, m.UsedGPUH, gpus, hours, m.CapacityGPUH)
	}
	m.Cost = toCents(m.CapacityGPUH * price)
	usedCost := min(toCents(m.UsedGPUH*price), m.Cost)
	usedParts := split(usedCost, weights)
	idle := m.Cost - usedCost
	var idleParts []Cents
	if in.Idle == IdleShare && usedCost > 0 {
		idleParts = split(idle, centsWeights(usedParts))
		idle = 0
	}
	var lines []Line
	for i, o := range owners {
		l := Line{Owner: o, Model: model, GPUHours: used[o], Used: usedParts[i]}
		if idleParts != nil {
			l.Idle = idleParts[i]
		}
		lines = append(lines, l)
	}
	if idle > 0 || len(lines) == 0 {
		lines = append(lines, Line{Owner: Idle, Model: model, GPUHours: m.CapacityGPUH - m.UsedGPUH, Idle: idle})
	}
	return m, lines, nil
}

// sharedLines splits the shared cost among the owners of lines (not the
// idle line), one line each with no model.
func sharedLines(lines []Line, shared Cents, mode SharedMode) []Line {
	if shared == 0 {
		return nil
	}
	byOwner := map[string]Cents{}
	for _, l := range lines {
		if l.Owner != Idle {
			byOwner[l.Owner] += l.Total()
		}
	}
	owners := slices.Sorted(maps.Keys(byOwner))
	if len(owners) == 0 {
		return []Line{{Owner: Idle, Shared: shared}}
	}
	weights := make([]float64, len(owners))
	for i, o := range owners {
		weights[i] = 1
		if mode == SharedWeighted {
			weights[i] = float64(byOwner[o])
		}
	}
	parts := split(shared, weights)
	if mode == SharedWeighted && slices.Max(weights) <= 0 {
		parts = split(shared, slices.Repeat([]float64{1}, len(owners)))
	}
	out := make([]Line, len(owners))
	for i, o := range owners {
		out[i] = Line{Owner: o, Shared: parts[i]}
	}
	return out
}

// Owners sums the lines per owner, in the lines' order (the idle line
// last).
func (b *Bill) Owners() []Line {
	var out []Line
	at := map[string]int{}
	for _, l := range b.Lines {
		i, ok := at[l.Owner]
		if !ok {
			i = len(out)
			at[l.Owner] = i
			out = append(out, Line{Owner: l.Owner})
		}
		out[i].GPUHours += l.GPUHours
		out[i].Used += l.Used
		out[i].Idle += l.Idle
		out[i].Shared += l.Shared
	}
	return out
}

// Price is the price of a GPU-hour of model m in this bill.
func (b *Bill) Price(model string) float64 {
	for _, m := range b.Models {
		if m.Model == model {
			return m.USDPerGPUHour
		}
	}
	return 0
}

func sortLines(ls []Line) {
	sort.SliceStable(ls, func(i, j int) bool {
		a, b := ls[i], ls[j]
		if (a.Owner == Idle) != (b.Owner == Idle) {
			return b.Owner == Idle
		}
		if a.Owner != b.Owner {
			return a.Owner < b.Owner
		}
		if (a.Model == "") != (b.Model == "") { // the shared line after the models
			return b.Model == ""
		}
		return a.Model < b.Model
	})
}

func centsWeights(cs []Cents) []float64 {
	w := make([]float64, len(cs))
	for i, c := range cs {
		w[i] = float64(c)
	}
	return w
}

// modelNames lists the models with capacity or use, sorted.
func modelNames(capacity map[string]float64, used map[string]map[string]float64) []string {
	set := map[string]bool{}
	for m := range capacity {
		set[m] = true
	}
	for m := range used {
		set[m] = true
	}
	return slices.Sorted(maps.Keys(set))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

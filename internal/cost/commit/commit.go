package commit

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Kind is how a commitment is billed.
type Kind string

// The kinds of commitment.
const (
	// Discount is a billing discount on matching usage in any node of the
	// commitment's scope, up to its amount each hour.
	Discount Kind = "discount"
	// Capacity is nodes that are paid every hour and must be filled.
	Capacity Kind = "capacity"
)

// Kinds lists the kinds in a fixed order.
var Kinds = []Kind{Discount, Capacity}

// ParseKind reads a kind, refusing any other word with the known ones.
func ParseKind(s string) (Kind, error) {
	k := Kind(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(Kinds, k) {
		return "", fmt.Errorf("commitment kind %q: want discount (savings plans, reserved instances, committed use discounts) or capacity (capacity blocks, capacity reservations)", s)
	}
	return k, nil
}

// Commitment is one commitment: its kind, its scope and its amount. Give
// exactly one of GPUs and USDPerHour.
type Commitment struct {
	Kind Kind `json:"kind"`
	// Models is the scope: the GPU models (or instance families) whose
	// usage it applies to; empty: every model of the usage.
	Models []string `json:"scope_models,omitempty"`
	Region string   `json:"region,omitempty"`
	// GPUs is the amount in GPUs each hour, paid at USDPerGPUHour.
	GPUs          float64 `json:"gpus,omitempty"`
	USDPerGPUHour float64 `json:"usd_per_gpu_hour,omitempty"`
	// USDPerHour is the amount as spend each hour at the models'
	// committed rates (Rate.Committed), as a Compute Savings Plan is sold.
	USDPerHour float64 `json:"usd_per_hour,omitempty"`
	Term       string  `json:"term,omitempty"` // "1y", "3y", "block": for the reader
}

// Rate is one model's prices per GPU-hour: on demand, and under a spend
// commitment (the plan's discounted rate).
type Rate struct {
	OnDemand  float64 `json:"on_demand_usd_per_gpu_hour"`
	Committed float64 `json:"committed_usd_per_gpu_hour,omitempty"`
}

// Usage is the eligible usage of one model: GPUs running in each hour.
type Usage struct {
	Model string
	GPUs  []float64
}

// Statement is a commitment's bill over the hours of the usage.
type Statement struct {
	Kind  Kind `json:"kind"`
	Hours int  `json:"hours"`
	// UsageGPUH is the eligible usage; CoveredGPUH the part the
	// commitment paid for and OverflowGPUH the rest, on demand.
	UsageGPUH    float64 `json:"usage_gpu_hours"`
	CoveredGPUH  float64 `json:"covered_gpu_hours"`
	OverflowGPUH float64 `json:"on_demand_gpu_hours"`
	// CommittedGPUH is the GPU-hours a GPU commitment bought and UnusedGPUH
	// those left idle (zero for a spend commitment).
	CommittedGPUH float64 `json:"committed_gpu_hours,omitempty"`
	UnusedGPUH    float64 `json:"unused_gpu_hours,omitempty"`
	// CommitmentUSD is paid whether used or not; UnusedUSD is its unused
	// part; OverflowUSD is the usage above it at on-demand prices.
	CommitmentUSD float64 `json:"commitment_usd"`
	UnusedUSD     float64 `json:"unused_commitment_usd"`
	OverflowUSD   float64 `json:"on_demand_usd"`
	TotalUSD      float64 `json:"total_usd"`
	// OnDemandUSD is the usage all at on-demand prices; SavingUSD what the
	// commitment saved against it (negative: it cost more).
	OnDemandUSD float64 `json:"all_on_demand_usd"`
	SavingUSD   float64 `json:"saving_usd"`
	// Coverage is the share of eligible usage the commitment covered:
	// GPU-hours for a GPU commitment (as Cost Explorer reports reserved
	// instance coverage in hours), on-demand-equivalent spend for a spend
	// commitment (as it reports Savings Plans coverage). Utilisation is
	// the share of the commitment used. Either is 0 when there is nothing
	// to divide.
	Coverage    float64 `json:"coverage"`
	Utilisation float64 `json:"utilisation"`
}

// check refuses a commitment Bill cannot price.
func (c Commitment) check() error {
	if _, err := ParseKind(string(c.Kind)); err != nil {
		return err
	}
	bad := func(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }
	switch {
	case bad(c.GPUs) || bad(c.USDPerHour) || bad(c.USDPerGPUHour):
		return errors.New("commitment: amounts and rates must be finite and not negative")
	case c.GPUs > 0 && c.USDPerHour > 0:
		return errors.New("commitment: give GPUs or USD per hour, not both")
	case c.GPUs > 0 && c.USDPerGPUHour == 0:
		return errors.New("commitment: a GPU commitment needs its rate per GPU-hour")
	}
	return nil
}

// inScope tells whether usage of model counts against c.
func (c Commitment) inScope(model string) bool {
	return len(c.Models) == 0 || slices.ContainsFunc(c.Models, func(m string) bool { return strings.EqualFold(m, model) })
}

package tco

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Monthly are a platform's fixed costs per month, in USD.
type Monthly struct {
	OperationsStaff   float64 `yaml:"operations_staff" json:"operations_staff"`
	ControlPlane      float64 `yaml:"control_plane" json:"control_plane"`
	Tools             float64 `yaml:"tools" json:"tools"`
	StorageNetworking float64 `yaml:"storage_networking" json:"storage_networking"`
}

// Profile is one way of running the work.
type Profile struct {
	Name              string            `yaml:"name" json:"name"`
	Title             string            `yaml:"title" json:"title"`
	Policy            string            `yaml:"policy" json:"policy"` // the simulator policy that models its scheduling
	ComputeMultiplier float64           `yaml:"compute_multiplier" json:"compute_multiplier"`
	ComputeReason     string            `yaml:"compute_reason" json:"compute_reason"`
	Monthly           Monthly           `yaml:"monthly_usd" json:"monthly_usd"`
	Reasons           map[string]string `yaml:"reasons" json:"reasons"`
}

//go:embed profiles.yaml
var profilesYAML []byte

// Defaults returns the embedded profiles. Their figures are assumptions.
func Defaults() ([]Profile, error) {
	return Parse(profilesYAML, "internal/cost/tco/profiles.yaml")
}

// Parse decodes and checks a profiles document.
func Parse(data []byte, source string) ([]Profile, error) {
	var doc struct {
		Profiles []Profile `yaml:"profiles"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %s", source, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var errs []error
	names := map[string]bool{}
	for i, p := range doc.Profiles {
		bad := func(msg string) { errs = append(errs, fmt.Errorf("%s: profile %d (%s): %s", source, i+1, p.Name, msg)) }
		switch {
		case p.Name == "":
			bad("missing name")
		case names[p.Name]:
			bad("name used twice")
		}
		names[p.Name] = true
		if p.ComputeMultiplier <= 0 {
			bad("compute_multiplier must be positive")
		}
		m := p.Monthly
		if m.OperationsStaff < 0 || m.ControlPlane < 0 || m.Tools < 0 || m.StorageNetworking < 0 {
			bad("monthly costs must not be negative")
		}
	}
	if len(doc.Profiles) == 0 {
		errs = append(errs, fmt.Errorf("%s: no profiles", source))
	}
	return doc.Profiles, errors.Join(errs...)
}

// Input is what a platform's scheduling made of the work in one month.
// Platforms that leave different work undone do not buy the same thing:
// UsefulGPUHours and UndoneGPUHours say what each bought it for.
type Input struct {
	GPUHoursBought float64 // GPU-hours paid for in the month
	USDPerGPUHour  float64 // bare price per GPU-hour, blended over capacity types
	UsefulGPUHours float64 // GPU-hours of work done and kept in the month
	UndoneGPUHours float64 // GPU-hours of work asked for that the platform did not do
	MeanWaitHours  float64
	P99WaitHours   float64
}

// Row is one platform's month.
type Row struct {
	Platform             string  `json:"platform"`
	Title                string  `json:"title"`
	GPUHoursBought       float64 `json:"gpu_hours_bought"`
	ComputeUSD           float64 `json:"compute_usd"`
	StorageNetworkingUSD float64 `json:"storage_networking_usd"`
	OperationsUSD        float64 `json:"operations_usd"` // staff and control plane
	ToolsUSD             float64 `json:"tools_usd"`
	TotalUSD             float64 `json:"total_usd"`
	// UsefulGPUHours is the work done and kept; USDPerUsefulGPUHour the
	// total over it (nil when none was); UndoneGPUHours the work left
	// undone. Totals compare equal work only when UndoneGPUHours do.
	UsefulGPUHours      float64  `json:"useful_gpu_hours"`
	USDPerUsefulGPUHour *float64 `json:"usd_per_useful_gpu_hour"`
	UndoneGPUHours      float64  `json:"work_undone_gpu_hours"`
	MeanWaitHours       float64  `json:"mean_wait_hours"`
	P99WaitHours        float64  `json:"p99_wait_hours"`
}

// Compare costs each profile that has an input, in the profiles' order.
// A profile without an input is an error: a comparison that silently drops
// a platform misleads.
func Compare(profiles []Profile, inputs map[string]Input) ([]Row, error) {
	var rows []Row
	for _, p := range profiles {
		in, ok := inputs[p.Name]
		if !ok {
			return nil, fmt.Errorf("no input (GPU-hours, waits) for platform %q", p.Name)
		}
		if in.GPUHoursBought < 0 || in.USDPerGPUHour < 0 || in.UsefulGPUHours < 0 || in.UndoneGPUHours < 0 {
			return nil, fmt.Errorf("platform %q: negative GPU-hours or price", p.Name)
		}
		r := Row{Platform: p.Name, Title: p.Title, GPUHoursBought: in.GPUHoursBought,
			ComputeUSD:           in.GPUHoursBought * in.USDPerGPUHour * p.ComputeMultiplier,
			StorageNetworkingUSD: p.Monthly.StorageNetworking,
			OperationsUSD:        p.Monthly.OperationsStaff + p.Monthly.ControlPlane,
			ToolsUSD:             p.Monthly.Tools,
			UsefulGPUHours:       in.UsefulGPUHours, UndoneGPUHours: in.UndoneGPUHours,
			MeanWaitHours: in.MeanWaitHours, P99WaitHours: in.P99WaitHours}
		r.TotalUSD = r.ComputeUSD + r.StorageNetworkingUSD + r.OperationsUSD + r.ToolsUSD
		if in.UsefulGPUHours > 0 {
			per := r.TotalUSD / in.UsefulGPUHours
			r.USDPerUsefulGPUHour = &per
		}
		rows = append(rows, r)
	}
	return rows, nil
}

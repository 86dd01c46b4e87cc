package price

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/gpu"
)

// Capacity is how GPU-hours are bought.
type Capacity string

// The capacity types a quote can be for.
const (
	OnDemand   Capacity = "on-demand"
	Spot       Capacity = "spot"
	Reserved1y Capacity = "reserved-1y"
	Reserved3y Capacity = "reserved-3y"
)

// Capacities lists every capacity type in a fixed order.
var Capacities = []Capacity{OnDemand, Spot, Reserved1y, Reserved3y}

// ErrUnknown is wrapped by every error for a price the catalog does not know.
var ErrUnknown = errors.New("price not known")

// Quote is the price of one instance for one capacity type, in exactly one
// of three forms (see catalog.yaml): a price, a range of observed prices
// against the on-demand price of the same snapshot, or a range of discounts
// off the offer's on-demand price.
type Quote struct {
	USDPerHour      float64   `yaml:"usd_per_hour,omitempty" json:"usd_per_hour,omitempty"`
	USDPerHourRange []float64 `yaml:"usd_per_hour_range,omitempty" json:"usd_per_hour_range,omitempty"`
	AgainstOnDemand float64   `yaml:"against_on_demand,omitempty" json:"against_on_demand,omitempty"`
	DiscountRange   []float64 `yaml:"discount_range,omitempty" json:"discount_range,omitempty"`
	Source          string    `yaml:"source" json:"source"`
	Seen            string    `yaml:"seen" json:"seen"`
	Note            string    `yaml:"note,omitempty" json:"note,omitempty"`

	origin string // file:line of the quote
}

// Interruption is how often spot capacity of an offer is taken back.
type Interruption struct {
	PerMonth []float64 `yaml:"per_month" json:"per_month"` // [low, high] fraction of instances interrupted in a month
	Source   string    `yaml:"source" json:"source"`
	Seen     string    `yaml:"seen" json:"seen"`
	Note     string    `yaml:"note,omitempty" json:"note,omitempty"`
}

// Offer is one instance type in one region and its quotes.
type Offer struct {
	Provider     string              `yaml:"provider"`
	Family       string              `yaml:"family"`
	Instance     string              `yaml:"instance"`
	Region       string              `yaml:"region"`
	GPU          string              `yaml:"gpu"`
	GPUs         int                 `yaml:"gpus"`
	Prices       map[Capacity]*Quote `yaml:"prices"`
	Interruption *Interruption       `yaml:"interruption,omitempty"`

	origin string // file:line of the offer
}

// Key identifies an offer: provider, instance and region.
func (o *Offer) Key() string {
	return strings.ToLower(o.Provider + "/" + o.Instance + "/" + o.Region)
}

// Name is the offer as people say it: "aws p5.48xlarge us-east-1".
func (o *Offer) Name() string {
	return o.Provider + " " + o.Instance + " " + o.Region
}

// Price is a price per GPU-hour and where it came from.
type Price struct {
	Capacity      Capacity `json:"capacity"`
	USDPerGPUHour float64  `json:"usd_per_gpu_hour"`
	Provider      string   `json:"provider"`
	Instance      string   `json:"instance"`
	Region        string   `json:"region"`
	GPU           string   `json:"gpu"`
	Source        string   `json:"source"`
	Seen          string   `json:"seen"`
	// How says how the figure was obtained when it is not a listed price,
	// for example "conservative end of a 35-40% discount range".
	How  string `json:"how,omitempty"`
	Note string `json:"note,omitempty"`
}

// PerGPUHour returns the offer's price of one GPU-hour on capacity c. A
// range resolves to its conservative end: the higher price.
func (o *Offer) PerGPUHour(c Capacity) (Price, error) {
	q := o.Prices[c]
	if q == nil {
		return Price{}, fmt.Errorf("%w: no %s price known for %s (%s); add one with a prices file", ErrUnknown, c, o.GPU, o.Name())
	}
	p := Price{Capacity: c, Provider: o.Provider, Instance: o.Instance, Region: o.Region,
		GPU: o.GPU, Source: q.Source, Seen: q.Seen, Note: q.Note}
	perInstance, how, err := o.instancePrice(q)
	if err != nil {
		return Price{}, err
	}
	p.USDPerGPUHour = perInstance / float64(o.GPUs)
	p.How = how
	return p, nil
}

// instancePrice resolves a quote to one instance-hour price.
func (o *Offer) instancePrice(q *Quote) (float64, string, error) {
	switch {
	case q.USDPerHour > 0:
		return q.USDPerHour, "", nil
	case len(q.USDPerHourRange) == 2 && q.AgainstOnDemand == o.onDemandUSD():
		return q.USDPerHourRange[1], fmt.Sprintf("highest of observed %g-%g", q.USDPerHourRange[0], q.USDPerHourRange[1]), nil
	case len(q.USDPerHourRange) == 2:
		off := 1 - q.USDPerHourRange[1]/q.AgainstOnDemand
		return o.discounted(off, fmt.Sprintf("smallest observed discount (%.1f%%, %g against %g on demand) applied to today's on-demand price",
			100*off, q.USDPerHourRange[1], q.AgainstOnDemand))
	case len(q.DiscountRange) == 2:
		return o.discounted(q.DiscountRange[0], fmt.Sprintf("conservative end of a %g-%g%% discount range",
			100*q.DiscountRange[0], 100*q.DiscountRange[1]))
	}
	return 0, "", fmt.Errorf("%s: quote has no price", o.Name())
}

func (o *Offer) discounted(off float64, how string) (float64, string, error) {
	od := o.onDemandUSD()
	if od <= 0 {
		return 0, "", fmt.Errorf("%w: %s: a discount needs a listed on-demand price", ErrUnknown, o.Name())
	}
	return od * (1 - off), how, nil
}

func (o *Offer) onDemandUSD() float64 {
	if q := o.Prices[OnDemand]; q != nil {
		return q.USDPerHour
	}
	return 0
}

// Unknown is something looked for and not found.
type Unknown struct {
	What string `yaml:"what" json:"what"`
	Seen string `yaml:"seen" json:"seen"`
}

// Catalog is a list of offers, in preference order, and what is not known.
type Catalog struct {
	Offers  []*Offer  `yaml:"offers"`
	Unknown []Unknown `yaml:"unknown"`
}

// Find returns the offer for a GPU model. family selects an offer by family
// or instance name (any case); empty family picks the first offer for the
// model, so the catalog's order sets the default.
func (c *Catalog) Find(model, family string) (*Offer, error) {
	if m, err := gpu.Lookup(model); err == nil {
		model = m.Name
	}
	var names []string
	for _, o := range c.Offers {
		if !strings.EqualFold(o.GPU, model) {
			continue
		}
		if family == "" || strings.EqualFold(o.Family, family) || strings.EqualFold(o.Instance, family) {
			return o, nil
		}
		names = append(names, o.Family)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: no offer for GPU model %q (offers exist for: %s)", ErrUnknown, model, strings.Join(c.models(), ", "))
	}
	return nil, fmt.Errorf("%w: no offer of family %q for %s (families: %s)", ErrUnknown, family, model, strings.Join(names, ", "))
}

// models lists the GPU models that have offers, sorted.
func (c *Catalog) models() []string {
	var ms []string
	for _, o := range c.Offers {
		if !slices.Contains(ms, o.GPU) {
			ms = append(ms, o.GPU)
		}
	}
	slices.Sort(ms)
	return ms
}

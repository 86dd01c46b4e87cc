package price

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/cost/commit"
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
	// ReservedBlock is a reservation of days to weeks paid in advance
	// (EC2 Capacity Blocks for ML), priced per hour of the block.
	ReservedBlock Capacity = "reserved-block"
)

// Capacities lists every capacity type in a fixed order.
var Capacities = []Capacity{OnDemand, Spot, Reserved1y, Reserved3y, ReservedBlock}

// kinds is how each commitment's capacity type is billed unless its quote
// says otherwise: 1- and 3-year commitments as they are mostly sold
// (EC2 Savings Plans and reserved instances, GCP committed use discounts,
// Azure reservations and savings plans) are discounts on matching usage;
// a block (EC2 Capacity Blocks for ML) is capacity, nodes to fill.
var kinds = map[Capacity]commit.Kind{Reserved1y: commit.Discount, Reserved3y: commit.Discount, ReservedBlock: commit.Capacity}

// Committed tells whether c is a commitment (a reserved type).
func (c Capacity) Committed() bool { _, ok := kinds[c]; return ok }

// FlexStart is a way some shapes are sold (GCP's Flex-start: capacity for
// up to seven days, queued until it is there). corral lists it in sold_as
// but does not price it.
const FlexStart = "flex-start"

// ErrUnknown is wrapped by every error for a price the catalog does not know.
var ErrUnknown = errors.New("price not known")

// ErrExpired is wrapped by an error for a price that is known but past the
// last day its document said it holds.
var ErrExpired = errors.New("price expired")

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
	// ValidUntil is the last day the document says its price holds (a
	// rate "scheduled to be updated on January 1, 2025" holds until
	// 2024-12-31); empty when it names none. After it the quote is
	// EXPIRED, and no plan buys on it unless told to.
	ValidUntil string `yaml:"valid_until,omitempty" json:"valid_until,omitempty"`
	// Kind is how a commitment is billed: discount (applied to matching
	// usage in any node) or capacity (nodes to fill); empty: its capacity
	// type's usual kind (CommitmentKind). Only commitments have one.
	Kind string `yaml:"kind,omitempty" json:"kind,omitempty"`
	Note string `yaml:"note,omitempty" json:"note,omitempty"`

	origin string // file:line of the quote
}

// Interruption is how often spot capacity of an offer is taken back: the
// provider's published band, or a [low, high] range of the share of
// instances interrupted in a month.
type Interruption struct {
	Band     string    `yaml:"band,omitempty" json:"band,omitempty"`           // an AWS Spot Instance Advisor band: <5%, 5-10%, 10-15%, 15-20%, >20%
	PerMonth []float64 `yaml:"per_month,omitempty" json:"per_month,omitempty"` // [low, high] fraction of instances interrupted in a month
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
	Form         string              `yaml:"form,omitempty"` // SXM, PCIe: keeps boards of one model apart
	GPUs         int                 `yaml:"gpus"`
	SoldAs       []string            `yaml:"sold_as,omitempty"` // capacity types it is sold as; empty: any
	Prices       map[Capacity]*Quote `yaml:"prices"`
	Interruption *Interruption       `yaml:"interruption,omitempty"`

	origin string // file:line of the offer
}

// Key identifies an offer: provider, instance and region.
func (o *Offer) Key() string {
	return strings.ToLower(o.Provider + "/" + o.Instance + "/" + o.Region)
}

// GPUKey is the offer's GPU as a price key: the model and its form,
// "A100-80GB-SXM", "A100-80GB-PCIE"; the model alone when no form is given.
func (o *Offer) GPUKey() string {
	if o.Form == "" {
		return o.GPU
	}
	return o.GPU + "-" + strings.ToUpper(o.Form)
}

// Sold reports whether the offer is sold as capacity type c.
func (o *Offer) Sold(c Capacity) bool {
	return len(o.SoldAs) == 0 || slices.Contains(o.SoldAs, string(c))
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
	ValidUntil    string   `json:"valid_until,omitempty"`
	// Kind is how a commitment is billed (discount or capacity); empty for
	// on-demand and spot.
	Kind commit.Kind `json:"kind,omitempty"`
	// How says how the figure was obtained when it is not a listed price,
	// for example "conservative end of a 35-40% discount range".
	How  string `json:"how,omitempty"`
	Note string `json:"note,omitempty"`
}

// PerGPUHour returns the offer's price of one GPU-hour on capacity c. A
// range resolves to its conservative end: the higher price.
func (o *Offer) PerGPUHour(c Capacity) (Price, error) {
	if !o.Sold(c) {
		return Price{}, fmt.Errorf("%w: %s (%s) is not sold as %s, only as %s", ErrUnknown, o.Name(), o.GPUKey(), c, strings.Join(o.SoldAs, ", "))
	}
	q := o.Prices[c]
	if q == nil {
		return Price{}, fmt.Errorf("%w: no %s price known for %s (%s); add one with a prices file", ErrUnknown, c, o.GPUKey(), o.Name())
	}
	p := Price{Capacity: c, Provider: o.Provider, Instance: o.Instance, Region: o.Region,
		GPU: o.GPU, Source: q.Source, Seen: q.Seen, ValidUntil: q.ValidUntil, Note: q.Note}
	perInstance, how, err := o.instancePrice(q)
	if err != nil {
		return Price{}, err
	}
	p.USDPerGPUHour = perInstance / float64(o.GPUs)
	p.How = how
	if c.Committed() {
		if p.Kind, err = o.CommitmentKind(c); err != nil {
			return Price{}, err
		}
	}
	return p, nil
}

// CommitmentKind is how the offer's commitment of capacity type c is
// billed: its quote's kind, or else the type's usual one (reserved-1y and
// reserved-3y discounts, reserved-block capacity). A kind corral does not
// know is an error naming the quote's file:line.
func (o *Offer) CommitmentKind(c Capacity) (commit.Kind, error) {
	k, ok := kinds[c]
	if !ok {
		return "", fmt.Errorf("%s is not a commitment: only %s, %s and %s have a kind", c, Reserved1y, Reserved3y, ReservedBlock)
	}
	if q := o.Prices[c]; q != nil && q.Kind != "" {
		parsed, err := commit.ParseKind(q.Kind)
		if err != nil {
			return "", fmt.Errorf("%s: offer %s: %s: %w", q.origin, o.Instance, c, err)
		}
		return parsed, nil
	}
	return k, nil
}

// instancePrice resolves a quote to one instance-hour price.
func (o *Offer) instancePrice(q *Quote) (float64, string, error) {
	switch {
	case q.USDPerHour > 0:
		return q.USDPerHour, "", nil
	case len(q.USDPerHourRange) == 2:
		return q.USDPerHourRange[1], fmt.Sprintf("highest of observed %g-%g", q.USDPerHourRange[0], q.USDPerHourRange[1]), nil
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
// AsOf is the date the catalog as a whole was last checked.
type Catalog struct {
	AsOf    string    `yaml:"as_of,omitempty"`
	Offers  []*Offer  `yaml:"offers"`
	Unknown []Unknown `yaml:"unknown"`
}

// Find returns the offer for a GPU model. family selects an offer by family
// or instance name (any case); empty family picks the first offer for the
// model, so the catalog's order sets the default.
func (c *Catalog) Find(model, family string) (*Offer, error) {
	for _, o := range c.Offers {
		if o.Form != "" && strings.EqualFold(o.GPUKey(), model) && (family == "" || strings.EqualFold(o.Family, family) || strings.EqualFold(o.Instance, family)) {
			return o, nil
		}
	}
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

// FindAll returns every offer for a GPU model (a catalog name, an alias or
// a price key with its form, such as A100-80GB-PCIE), in catalog order.
func (c *Catalog) FindAll(model string) []*Offer {
	canonical := model
	if m, err := gpu.Lookup(model); err == nil {
		canonical = m.Name
	}
	var out []*Offer
	for _, o := range c.Offers {
		if strings.EqualFold(o.GPU, canonical) || (o.Form != "" && strings.EqualFold(o.GPUKey(), model)) {
			out = append(out, o)
		}
	}
	return out
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

// FindFrom is Find among one provider's offers (any case); an empty
// provider is Find. A provider with no offers, or none for the model, is
// an error naming the providers, or the provider's models, the catalog has.
func (c *Catalog) FindFrom(provider, model, family string) (*Offer, error) {
	if provider == "" {
		return c.Find(model, family)
	}
	sub := &Catalog{AsOf: c.AsOf}
	for _, o := range c.Offers {
		if strings.EqualFold(o.Provider, provider) {
			sub.Offers = append(sub.Offers, o)
		}
	}
	if len(sub.Offers) == 0 {
		return nil, fmt.Errorf("%w: no offer from provider %q (providers: %s)", ErrUnknown, provider, strings.Join(c.providers(), ", "))
	}
	o, err := sub.Find(model, family)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", strings.ToLower(provider), err)
	}
	return o, nil
}

// providers lists the providers that have offers, sorted.
func (c *Catalog) providers() []string {
	var ps []string
	for _, o := range c.Offers {
		if p := strings.ToLower(o.Provider); !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

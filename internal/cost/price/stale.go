package price

import (
	"fmt"

	"github.com/corral-sched/corral/internal/cost/commit"
	"slices"
	"time"
)

// MaxAge is how old a quote may be before corral warns about it.
const MaxAge = 90 * 24 * time.Hour

// Line is one figure of the catalog as `corral prices` lists it: a price
// (or an interruption band) of one offer, where it came from and how old
// its data is on a given day.
type Line struct {
	Provider string   `json:"provider"`
	Instance string   `json:"instance"`
	Region   string   `json:"region"`
	GPUKey   string   `json:"gpu"`
	GPUs     int      `json:"gpus"`
	Capacity Capacity `json:"capacity"` // "" for an interruption band
	// Kind is how a commitment is billed: discount or capacity.
	Kind commit.Kind `json:"kind,omitempty"`
	// USDPerHour and USDPerGPUHour are the price corral uses (the
	// conservative end of a range); How says how it was derived.
	USDPerHour    float64 `json:"usd_per_hour,omitempty"`
	USDPerGPUHour float64 `json:"usd_per_gpu_hour,omitempty"`
	How           string  `json:"how,omitempty"`
	Band          string  `json:"interruption_band,omitempty"`
	Source        string  `json:"source"`
	Seen          string  `json:"seen"`
	AgeDays       int     `json:"age_days"`
	Stale         bool    `json:"stale"` // older than MaxAge
	ValidUntil    string  `json:"valid_until,omitempty"`
	Expired       bool    `json:"expired"` // past ValidUntil
	Note          string  `json:"note,omitempty"`
	Origin        string  `json:"origin"` // file:line
}

// Lines lists every figure of the catalog, offer by offer in catalog order
// and capacity by capacity in Capacities order, then the offer's
// interruption band, each aged on now.
func (c *Catalog) Lines(now time.Time) ([]Line, error) {
	var out []Line
	for _, o := range c.Offers {
		for _, capacity := range Capacities {
			q := o.Prices[capacity]
			if q == nil {
				continue
			}
			p, err := o.PerGPUHour(capacity)
			if err != nil {
				return nil, err
			}
			l := o.line(capacity, q.Source, q.Seen, q.Note, q.origin, now)
			l.ValidUntil = q.ValidUntil
			st, _ := stateOn(q.Seen, q.ValidUntil, now)
			l.Expired = st == Expired
			l.USDPerGPUHour, l.USDPerHour, l.How, l.Kind = p.USDPerGPUHour, p.USDPerGPUHour*float64(o.GPUs), p.How, p.Kind
			out = append(out, l)
		}
		if in := o.Interruption; in != nil {
			l := o.line("", in.Source, in.Seen, in.Note, o.origin, now)
			l.Band = in.Band
			if l.Band == "" {
				l.Band = fmt.Sprintf("%g-%g%%", 100*in.PerMonth[0], 100*in.PerMonth[1])
			}
			out = append(out, l)
		}
	}
	return out, nil
}

func (o *Offer) line(c Capacity, source, seen, note, origin string, now time.Time) Line {
	l := Line{Provider: o.Provider, Instance: o.Instance, Region: o.Region, GPUKey: o.GPUKey(), GPUs: o.GPUs,
		Capacity: c, Source: source, Seen: seen, Note: note, Origin: origin}
	if d, err := time.Parse(time.DateOnly, seen); err == nil {
		l.AgeDays = int(now.Sub(d).Hours() / 24)
		l.Stale = now.Sub(d) > MaxAge
	}
	return l
}

// State is how current a price is on a given day.
type State string

// The states of a price: Fresh, older than MaxAge (Stale), or past the
// last day its document said it holds (Expired).
const (
	Fresh   State = "fresh"
	Stale   State = "STALE"
	Expired State = "EXPIRED"
)

// Warning is a price that is stale or expired on a given day, with what a
// reader needs to judge it: its age, its validity and its source.
type Warning struct {
	State      State    `json:"state"`
	Provider   string   `json:"provider"`
	Instance   string   `json:"instance"`
	Region     string   `json:"region"`
	Capacity   Capacity `json:"capacity"`
	Seen       string   `json:"seen"`
	ValidUntil string   `json:"valid_until,omitempty"`
	AgeDays    int      `json:"age_days"`
	Source     string   `json:"source"`
	Message    string   `json:"message"`
}

// StateOn says whether p is fresh, stale or expired on now, and how many
// days old its data is. A price whose dates do not parse is fresh: Parse
// refuses such documents.
func (p Price) StateOn(now time.Time) (State, int) {
	return stateOn(p.Seen, p.ValidUntil, now)
}

func stateOn(seen, validUntil string, now time.Time) (State, int) {
	d, err := time.Parse(time.DateOnly, seen)
	if err != nil {
		return Fresh, 0
	}
	age := int(now.Sub(d).Hours() / 24)
	if v, err := time.Parse(time.DateOnly, validUntil); err == nil && now.After(v) {
		return Expired, age
	}
	if now.Sub(d) > MaxAge {
		return Stale, age
	}
	return Fresh, age
}

// Warnings lists the prices of ps that are stale or expired on now, each
// once, in the order given.
func Warnings(ps []Price, now time.Time) []Warning {
	var out []Warning
	for _, p := range ps {
		st, age := p.StateOn(now)
		if st == Fresh {
			continue
		}
		w := Warning{State: st, Provider: p.Provider, Instance: p.Instance, Region: p.Region, Capacity: p.Capacity,
			Seen: p.Seen, ValidUntil: p.ValidUntil, AgeDays: age, Source: p.Source}
		w.Message = w.message(now)
		if !slices.ContainsFunc(out, func(o Warning) bool { return o.Message == w.Message }) {
			out = append(out, w)
		}
	}
	return out
}

// message reads "EXPIRED: aws p5.48xlarge us-east-1 reserved-block: valid
// until 2024-12-31; data of 2024-12-31, 700 days old on 2026-12-01; source
// URL".
func (w Warning) message(now time.Time) string {
	what := fmt.Sprintf("older than %d days", int(MaxAge.Hours()/24))
	if w.State == Expired {
		what = "valid until " + w.ValidUntil
	}
	return fmt.Sprintf("%s: %s %s %s %s: %s; data of %s, %d days old on %s; source %s", w.State, w.Provider, w.Instance,
		w.Region, w.Capacity, what, w.Seen, w.AgeDays, now.Format(time.DateOnly), w.Source)
}

// StaleWarnings is the message of each of Warnings(ps, now).
func StaleWarnings(ps []Price, now time.Time) []string {
	var out []string
	for _, w := range Warnings(ps, now) {
		out = append(out, w.Message)
	}
	return out
}

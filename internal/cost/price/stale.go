package price

import (
	"fmt"
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
			l.USDPerGPUHour, l.USDPerHour, l.How = p.USDPerGPUHour, p.USDPerGPUHour*float64(o.GPUs), p.How
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

// StaleWarnings says, for each price in ps older than MaxAge on now, how
// old it is: "aws p5.48xlarge us-east-1 spot: data of 2025-06-04, 545 days
// old on 2026-12-01". Prices are named once each.
func StaleWarnings(ps []Price, now time.Time) []string {
	var out []string
	for _, p := range ps {
		d, err := time.Parse(time.DateOnly, p.Seen)
		if err != nil || now.Sub(d) <= MaxAge {
			continue
		}
		w := fmt.Sprintf("%s %s %s %s: data of %s, %d days old on %s", p.Provider, p.Instance, p.Region, p.Capacity,
			p.Seen, int(now.Sub(d).Hours()/24), now.Format(time.DateOnly))
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

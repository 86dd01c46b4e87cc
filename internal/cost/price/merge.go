package price

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
)

// Merge returns base with over laid on it. An offer of over with the same
// provider, instance and region as one of base replaces that offer's quotes
// capacity by capacity, and its other fields where over sets them; other
// offers of over are added after base's, in their order. Neither input is
// modified. Call Check on the result.
func Merge(base, over *Catalog) *Catalog {
	out := &Catalog{AsOf: base.AsOf, Unknown: append(base.Unknown[:len(base.Unknown):len(base.Unknown)], over.Unknown...)}
	if over.AsOf != "" {
		out.AsOf = over.AsOf
	}
	index := map[string]int{}
	for _, o := range base.Offers {
		index[o.Key()] = len(out.Offers)
		out.Offers = append(out.Offers, cloneOffer(o))
	}
	for _, o := range over.Offers {
		i, ok := index[o.Key()]
		if !ok {
			index[o.Key()] = len(out.Offers)
			out.Offers = append(out.Offers, cloneOffer(o))
			continue
		}
		layOver(out.Offers[i], o)
	}
	return out
}

func cloneOffer(o *Offer) *Offer {
	c := *o
	c.Prices = maps.Clone(o.Prices)
	return &c
}

// layOver copies what o sets onto dst.
func layOver(dst, o *Offer) {
	if o.Family != "" {
		dst.Family = o.Family
	}
	if o.GPU != "" {
		dst.GPU = o.GPU
	}
	if o.GPUs != 0 {
		dst.GPUs = o.GPUs
	}
	if o.Form != "" {
		dst.Form = o.Form
	}
	if o.SoldAs != nil {
		dst.SoldAs = o.SoldAs
	}
	if o.Interruption != nil {
		dst.Interruption = o.Interruption
	}
	if dst.Prices == nil {
		dst.Prices = map[Capacity]*Quote{}
	}
	for c, q := range o.Prices {
		dst.Prices[c] = q
	}
	dst.origin = o.origin
}

// Check verifies what only a whole catalog can say: every offer names a GPU
// model and a GPU count, has an on-demand price when it is sold on demand
// (discounts are taken from it), and some price.
func (c *Catalog) Check() error {
	var errs []error
	for _, o := range c.Offers {
		if o.GPU == "" {
			errs = append(errs, fmt.Errorf("%s: offer %s: missing gpu (a GPU model such as H100-80GB)", o.origin, o.Instance))
		}
		if o.GPUs <= 0 {
			errs = append(errs, fmt.Errorf("%s: offer %s: missing gpus (GPUs per instance)", o.origin, o.Instance))
		}
		if q := o.Prices[OnDemand]; o.Sold(OnDemand) && (q == nil || q.USDPerHour <= 0) {
			errs = append(errs, fmt.Errorf("%s: offer %s: needs an on-demand usd_per_hour", o.origin, o.Instance))
		}
		for c, q := range o.Prices {
			if q != nil && !o.Sold(c) {
				errs = append(errs, fmt.Errorf("%s: offer %s: a %s price, but it is sold only as %s", q.origin, o.Instance, c, strings.Join(o.SoldAs, ", ")))
			}
		}
		if len(o.Prices) == 0 {
			errs = append(errs, fmt.Errorf("%s: offer %s: no price", o.origin, o.Instance))
		}
		if err := o.checkSpotBelowOnDemand(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkSpotBelowOnDemand refuses a spot price above the offer's on-demand
// price: spot is sold below on demand (AWS charges at most the on-demand
// price for spot; GCP and Azure list spot at a discount), so such a pair
// is a mistyped figure or two figures of different instances or dates,
// and a plan made from it would show spot as a loss.
func (o *Offer) checkSpotBelowOnDemand() error {
	sq, od := o.Prices[Spot], o.onDemandUSD()
	if sq == nil || od <= 0 {
		return nil
	}
	spot, _, err := o.instancePrice(sq)
	if err != nil || spot <= od {
		return nil
	}
	return fmt.Errorf("%s: offer %s: spot $%g an hour is above on-demand $%g: refused, since spot is sold below on demand; check that both are for the same instance, region and date (spot seen %s, on-demand seen %s)",
		sq.origin, o.Instance, spot, od, sq.Seen, o.Prices[OnDemand].Seen)
}

// CheckDates refuses a figure whose data is dated after now: an age below
// zero is a typo (a year off) or a clock that is wrong, and a price from
// the future would never be said stale. A day's grace covers time zones.
func (c *Catalog) CheckDates(now time.Time) error {
	var errs []error
	future := func(origin, what, seen string) {
		if d, err := time.Parse(time.DateOnly, seen); err == nil && d.After(now.Add(24*time.Hour)) {
			errs = append(errs, fmt.Errorf("%s: %s: seen %s is after today (%s): give the date the data is from",
				origin, what, seen, now.Format(time.DateOnly)))
		}
	}
	for _, o := range c.Offers {
		for _, cp := range sortedCapacities(o.Prices) {
			if q := o.Prices[cp]; q != nil {
				future(q.origin, "offer "+o.Instance+": "+string(cp), q.Seen)
			}
		}
		if in := o.Interruption; in != nil {
			future(o.origin, "offer "+o.Instance+": interruption", in.Seen)
		}
	}
	return errors.Join(errs...)
}

// Origin is the file:line the offer was last set from.
func (o *Offer) Origin() string { return o.origin }

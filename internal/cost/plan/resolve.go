package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/cost/price"
)

// resolve finds a model's prices in the catalog: those of the offer
// Options.Families names, or else of the first offer in catalog order
// that has every price the plan needs and none of them expired on
// Options.Now. An expired price is used only with Options.AllowExpired;
// when it is all there is, the error wraps price.ErrExpired and says how
// to go on.
func resolve(cat *price.Catalog, model string, o Options) (Prices, Rates, error) {
	offers, err := candidates(cat, model, o.Families[model])
	if err != nil {
		return Prices{}, Rates{}, err
	}
	var firstErr error
	var expired []string
	for _, offer := range offers {
		ps, r, err := offerPrices(offer, o)
		if err != nil {
			firstErr = cmpOr(firstErr, err)
			continue
		}
		if msgs := expiredOf(ps, o); len(msgs) > 0 && !o.AllowExpired {
			expired = append(expired, msgs...)
			continue
		}
		return ps, r, nil
	}
	if len(expired) == 0 {
		return Prices{}, Rates{}, firstErr
	}
	return Prices{}, Rates{}, fmt.Errorf("%w: no current %s price for %s, only expired ones (%s): give a current price in a prices file (--prices) or plan on the expired one (--allow-expired)",
		price.ErrExpired, o.Term, model, strings.Join(expired, "; "))
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// candidates are the offers resolve may use, in preference order.
func candidates(cat *price.Catalog, model, family string) ([]*price.Offer, error) {
	if family != "" {
		offer, err := cat.Find(model, family)
		if err != nil {
			return nil, err
		}
		return []*price.Offer{offer}, nil
	}
	if _, err := cat.Find(model, ""); err != nil {
		return nil, err
	}
	return cat.FindAll(model), nil
}

// offerPrices are the prices of one offer the plan needs.
func offerPrices(offer *price.Offer, o Options) (Prices, Rates, error) {
	var ps Prices
	var err error
	if ps.OnDemand, err = offer.PerGPUHour(price.OnDemand); err != nil {
		return Prices{}, Rates{}, err
	}
	if ps.Committed, err = offer.PerGPUHour(o.Term); err != nil {
		return Prices{}, Rates{}, err
	}
	ps.GPUsPerInstance = offer.GPUs
	r := Rates{Committed: ps.Committed.USDPerGPUHour, OnDemand: ps.OnDemand.USDPerGPUHour, SpotShare: o.SpotShare}
	if o.SpotShare > 0 {
		sp, err := offer.PerGPUHour(price.Spot)
		if err != nil {
			return Prices{}, Rates{}, err
		}
		ps.Spot, r.Spot = &sp, sp.USDPerGPUHour
	}
	return ps, r, nil
}

// all lists the prices in ps.
func (ps Prices) all() []price.Price {
	out := []price.Price{ps.Committed, ps.OnDemand}
	if ps.Spot != nil {
		out = append(out, *ps.Spot)
	}
	return out
}

// expiredOf says which of ps are expired on o.Now.
func expiredOf(ps Prices, o Options) []string {
	var out []string
	for _, w := range price.Warnings(ps.all(), o.Now) {
		if w.State == price.Expired {
			out = append(out, w.Message)
		}
	}
	return out
}

// appendWarnings adds the warnings of ws that dst lacks.
func appendWarnings(dst, ws []price.Warning) []price.Warning {
	for _, w := range ws {
		if !slices.ContainsFunc(dst, func(d price.Warning) bool { return d.Message == w.Message }) {
			dst = append(dst, w)
		}
	}
	return dst
}

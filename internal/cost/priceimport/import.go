package priceimport

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/corral-sched/corral/internal/cost/price"
)

// Formats are the formats Import reads.
var Formats = []string{"aws", "azure", "gcp", "negotiated"}

// Options say where the file came from and when.
type Options struct {
	// Source names the document in every quote: its URL or path. Empty:
	// the format's documentation page and the file name given as Name.
	Source string
	Name   string // the file's name, for Source and errors
	// Seen is the date of the data (YYYY-MM-DD) for formats that carry
	// none of their own (Azure and GCP responses: the day they were
	// fetched). AWS files give their publication date, which wins.
	Seen string
	// Base is a catalog whose offers give the GPU model and count of
	// instances the built-in shapes lack (the default catalog, usually).
	Base *price.Catalog
}

// Result is an imported prices document and what was left out, and why.
type Result struct {
	Catalog *price.Catalog
	Skipped []string
}

// Import reads a price file of format (one of Formats).
func Import(format string, data []byte, o Options) (*Result, error) {
	b := &builder{opts: o, offers: map[string]*price.Offer{}}
	var err error
	switch format {
	case "aws":
		err = b.aws(data)
	case "azure":
		err = b.azure(data)
	case "gcp":
		err = b.gcp(data)
	case "negotiated":
		err = b.negotiated(data)
	default:
		return nil, fmt.Errorf("format %q: want one of %s", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Name, err)
	}
	r, err := b.result()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Name, err)
	}
	return r, r.check()
}

// check reads the document back as the commands will: every figure passes
// price.Parse's checks (a price of 1e300 in a provider's file is refused
// here as in a hand-written one).
func (r *Result) check() error {
	data, err := Encode(r.Catalog)
	if err != nil {
		return err
	}
	if _, err := price.Parse(data, "imported prices"); err != nil {
		return fmt.Errorf("imported prices do not read back: %w", err)
	}
	return nil
}

// Encode writes an imported document in the format of catalog.yaml.
func Encode(c *price.Catalog) ([]byte, error) {
	head := "# Imported by corral prices import; lay it over the catalog with --prices.\n"
	data, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode prices: %w", err)
	}
	return append([]byte(head), data...), nil
}

// builder collects offers keyed by provider, instance and region.
type builder struct {
	opts    Options
	offers  map[string]*price.Offer
	order   []string
	skipped []string
	seen    string // the latest date of data given
}

// source is the Source of every quote: the user's, or doc and the file.
func (b *builder) source(doc string) string {
	if b.opts.Source != "" {
		return b.opts.Source
	}
	return fmt.Sprintf("%s (format: %s)", b.opts.Name, doc)
}

// skip records something left out.
func (b *builder) skip(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !slices.Contains(b.skipped, s) {
		b.skipped = append(b.skipped, s)
	}
}

// shapeOf finds an instance's GPUs: the built-in table, then the base
// catalog.
func (b *builder) shapeOf(provider, instance string, table map[string]shape) (shape, bool) {
	if s, ok := table[instance]; ok {
		return s, true
	}
	if b.opts.Base != nil {
		for _, o := range b.opts.Base.Offers {
			if strings.EqualFold(o.Provider, provider) && strings.EqualFold(o.Instance, instance) {
				return shape{GPU: o.GPU, Form: o.Form, GPUs: o.GPUs}, true
			}
		}
	}
	return shape{}, false
}

// add records a quote; of two for the same offer and capacity the higher
// is kept, and the lower named in the note.
func (b *builder) add(provider, instance, region string, s shape, c price.Capacity, q *price.Quote) {
	key := strings.ToLower(provider + "/" + instance + "/" + region)
	o := b.offers[key]
	if o == nil {
		o = &price.Offer{Provider: provider, Family: family(instance), Instance: instance, Region: region,
			GPU: s.GPU, Form: s.Form, GPUs: s.GPUs, Prices: map[price.Capacity]*price.Quote{}}
		b.offers[key] = o
		b.order = append(b.order, key)
	}
	if q.Seen > b.seen {
		b.seen = q.Seen
	}
	prev := o.Prices[c]
	switch {
	case prev == nil:
		o.Prices[c] = q
	case q.USDPerHour > prev.USDPerHour:
		q.Note = joinNote(q.Note, prev.Note)
		o.Prices[c] = q
	default:
		prev.Note = joinNote(prev.Note, q.Note)
	}
}

func joinNote(a, b string) string {
	if a == "" || strings.Contains(a, b) {
		return a
	}
	return a + "; " + b
}

// family is an instance's family: "p5" of p5.48xlarge; empty for names
// without one (an Azure size, a GCP GPU), so that laid over the catalog
// the catalog's family stays.
func family(instance string) string {
	f, _, _ := strings.Cut(instance, ".")
	if f == instance {
		return ""
	}
	return f
}

func (b *builder) result() (*Result, error) {
	c := &price.Catalog{AsOf: b.seen}
	for _, k := range b.order {
		o := b.offers[k]
		if _, ok := o.Prices[price.OnDemand]; !ok && !b.inBase(o) {
			o.SoldAs = soldAs(o)
		}
		c.Offers = append(c.Offers, o)
	}
	if len(c.Offers) == 0 {
		return nil, errors.New("no GPU instance price found in the file" + skippedList(b.skipped))
	}
	return &Result{Catalog: c, Skipped: b.skipped}, nil
}

// soldAs lists the capacities an offer is priced for: an offer the file
// gives no on-demand price for, and the base does not know, is sold as
// those only (a catalog needs an on-demand price for what is sold on
// demand).
func soldAs(o *price.Offer) []string {
	var out []string
	for _, c := range price.Capacities {
		if o.Prices[c] != nil {
			out = append(out, string(c))
		}
	}
	return out
}

// inBase tells whether the base catalog has the offer.
func (b *builder) inBase(o *price.Offer) bool {
	if b.opts.Base == nil {
		return false
	}
	return slices.ContainsFunc(b.opts.Base.Offers, func(x *price.Offer) bool { return x.Key() == o.Key() })
}

func skippedList(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return " (skipped: " + strings.Join(s, "; ") + ")"
}

// day turns an RFC 3339 time or a date into YYYY-MM-DD.
func day(s string) (string, error) {
	if len(s) >= 10 {
		if _, err := time.Parse(time.DateOnly, s[:10]); err == nil {
			return s[:10], nil
		}
	}
	return "", fmt.Errorf("date %q: want YYYY-MM-DD or an RFC 3339 time", s)
}

// hoursOf is the hours of a term of years.
func hoursOf(years int) float64 { return float64(years) * 8760 }

// termCapacity is the capacity type of a 1- or 3-year commitment.
func termCapacity(years int) (price.Capacity, bool) {
	switch years {
	case 1:
		return price.Reserved1y, true
	case 3:
		return price.Reserved3y, true
	}
	return "", false
}

package price

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/corral-sched/corral/internal/gpu"
)

//go:embed catalog.yaml
var catalogYAML []byte

// DefaultSource names the embedded catalog in errors and origins.
const DefaultSource = "internal/cost/price/catalog.yaml"

// Default returns a fresh copy of the embedded catalog.
func Default() (*Catalog, error) {
	c, err := Parse(catalogYAML, DefaultSource)
	if err != nil {
		return nil, err
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	if c.AsOf == "" {
		return nil, fmt.Errorf("%s: missing as_of, the date the catalog was last checked", DefaultSource)
	}
	return c, nil
}

// Parse decodes a prices document and checks each offer and quote on its
// own; source names the document in errors, which read "source:line: ...".
// Whether every offer has an on-demand price is checked by Check, after
// Merge, since an override may give only the figures it changes.
func Parse(data []byte, source string) (*Catalog, error) {
	var c Catalog
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty prices file", source)
		}
		return nil, yamlError(source, err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(source, err)
	}
	attachOrigins(&c, &root, source)
	var errs []error
	if c.AsOf != "" {
		if _, err := time.Parse(time.DateOnly, c.AsOf); err != nil {
			errs = append(errs, fmt.Errorf("%s: as_of must be a date YYYY-MM-DD, got %q", source, c.AsOf))
		}
	}
	for _, o := range c.Offers {
		errs = append(errs, checkOffer(o)...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &c, nil
}

var yamlLine = regexp.MustCompile(`line (\d+): `)

// yamlError rewrites the YAML library's "line N: msg" as "source:N: msg".
func yamlError(source string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(l)
		if m := yamlLine.FindStringSubmatchIndex(l); m != nil && m[0] == 0 {
			l = source + ":" + l[m[2]:m[3]] + ": " + l[m[1]:]
		} else {
			l = source + ": " + l
		}
		out = append(out, l)
	}
	return errors.New(strings.Join(out, "\n"))
}

// attachOrigins records the file:line of every offer and quote.
func attachOrigins(c *Catalog, root *yaml.Node, source string) {
	offers := mapValue(docMapping(root), "offers")
	if offers == nil || offers.Kind != yaml.SequenceNode {
		return
	}
	for i, item := range offers.Content {
		if i >= len(c.Offers) {
			break
		}
		o := c.Offers[i]
		o.origin = source + ":" + strconv.Itoa(item.Line)
		prices := mapValue(item, "prices")
		for cap, q := range o.Prices {
			if n := mapKey(prices, string(cap)); n != nil && q != nil {
				q.origin = source + ":" + strconv.Itoa(n.Line)
			} else if q != nil {
				q.origin = o.origin
			}
		}
	}
}

func docMapping(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return n.Content[0]
	}
	return n
}

// mapValue returns the value node of key in mapping m, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if k := mapKey(m, key); k != nil {
		return m.Content[slices.Index(m.Content, k)+1]
	}
	return nil
}

// mapKey returns the key node key in mapping m, or nil.
func mapKey(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return nil
}

// checkOffer checks what an offer says about itself.
func checkOffer(o *Offer) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: offer %s: %s", o.origin, o.Instance, fmt.Sprintf(format, args...)))
	}
	for _, f := range []struct{ name, v string }{{"provider", o.Provider}, {"instance", o.Instance}, {"region", o.Region}} {
		if f.v == "" {
			bad("missing %s", f.name)
		}
	}
	if o.GPU != "" {
		m, err := gpu.Lookup(o.GPU)
		if err != nil {
			bad("%v", err)
		} else {
			o.GPU = m.Name
		}
	}
	if o.GPUs < 0 {
		bad("gpus must be positive, not %d", o.GPUs)
	}
	for _, c := range sortedCapacities(o.Prices) {
		if !slices.Contains(Capacities, c) {
			errs = append(errs, fmt.Errorf("%s: offer %s: unknown capacity type %q (known: on-demand, spot, reserved-1y, reserved-3y)", o.origin, o.Instance, c))
			continue
		}
		for _, e := range checkQuote(o.Prices[c]) {
			errs = append(errs, fmt.Errorf("%s: offer %s: %s: %w", o.Prices[c].origin, o.Instance, c, e))
		}
		if q := o.Prices[c]; q != nil && q.Kind != "" {
			if !c.Committed() {
				errs = append(errs, fmt.Errorf("%s: offer %s: %s: kind %q: only a commitment (reserved-1y, reserved-3y, reserved-block) has a kind", q.origin, o.Instance, c, q.Kind))
			} else if _, err := o.CommitmentKind(c); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, s := range o.SoldAs {
		if s != FlexStart && !slices.Contains(Capacities, Capacity(s)) {
			bad("sold_as %q: want capacity types (on-demand, spot, reserved-1y, reserved-3y, reserved-block) or flex-start", s)
		}
	}
	for _, c := range sortedCapacities(o.Prices) {
		if !o.Sold(c) {
			errs = append(errs, fmt.Errorf("%s: offer %s: a %s price, but it is sold only as %s", o.Prices[c].origin, o.Instance, c, strings.Join(o.SoldAs, ", ")))
		}
	}
	if in := o.Interruption; in != nil {
		checkInterruption(in, bad)
	}
	return errs
}

// Bands are the AWS Spot Instance Advisor's frequency-of-interruption
// bands and the monthly shares they stand for; ">20%" has no upper bound,
// and is taken as 20% with a note wherever it is used.
var Bands = map[string][2]float64{
	"<5%": {0, 0.05}, "5-10%": {0.05, 0.10}, "10-15%": {0.10, 0.15}, "15-20%": {0.15, 0.20}, ">20%": {0.20, 0.20},
}

// checkInterruption checks a band or range and its provenance, saying what
// is wrong through bad, and fills PerMonth from the band.
func checkInterruption(in *Interruption, bad func(string, ...any)) {
	if in.Band != "" {
		r, ok := Bands[in.Band]
		if !ok {
			bad("interruption.band %q: want one of <5%%, 5-10%%, 10-15%%, 15-20%%, >20%%", in.Band)
		} else if in.PerMonth == nil {
			in.PerMonth = []float64{r[0], r[1]}
		}
	}
	if in.Band == "" || in.PerMonth != nil {
		if err := checkRange(in.PerMonth, 0, 1); err != nil {
			bad("interruption.per_month: %v", err)
		}
	}
	if err := checkProvenance(in.Source, in.Seen); err != nil {
		bad("interruption: %v", err)
	}
}

// checkQuote checks that a quote has exactly one form and a provenance.
func checkQuote(q *Quote) []error {
	if q == nil {
		return []error{errors.New("empty quote")}
	}
	var errs []error
	forms := 0
	if q.USDPerHour != 0 {
		forms++
		if q.USDPerHour < 0 || q.USDPerHour > MaxUSDPerHour || math.IsNaN(q.USDPerHour) {
			errs = append(errs, fmt.Errorf("usd_per_hour %g: want the hourly price of one instance, above 0 and at most %g (a price per month, per term or in cents?)", q.USDPerHour, float64(MaxUSDPerHour)))
		}
	}
	if q.USDPerHourRange != nil {
		forms++
		if err := checkRange(q.USDPerHourRange, 0, MaxUSDPerHour); err != nil {
			errs = append(errs, fmt.Errorf("usd_per_hour_range: %w", err))
		}
		if q.AgainstOnDemand < 0 {
			errs = append(errs, fmt.Errorf("against_on_demand must not be negative, not %g", q.AgainstOnDemand))
		}
	}
	if q.DiscountRange != nil {
		forms++
		if err := checkRange(q.DiscountRange, 0, 0.999); err != nil {
			errs = append(errs, fmt.Errorf("discount_range: %w", err))
		}
	}
	if forms != 1 {
		errs = append(errs, fmt.Errorf("give exactly one of usd_per_hour, usd_per_hour_range or discount_range (found %d)", forms))
	}
	if err := checkProvenance(q.Source, q.Seen); err != nil {
		errs = append(errs, err)
	}
	if q.ValidUntil != "" {
		if v, err := time.Parse(time.DateOnly, q.ValidUntil); err != nil {
			errs = append(errs, fmt.Errorf("valid_until must be a date YYYY-MM-DD, got %q", q.ValidUntil))
		} else if s, err := time.Parse(time.DateOnly, q.Seen); err == nil && v.Before(s) {
			errs = append(errs, fmt.Errorf("valid_until %s is before seen %s", q.ValidUntil, q.Seen))
		}
	}
	return errs
}

// MaxUSDPerHour bounds the hourly price of one instance: ten times the
// dearest GPU instance listed (an 8-GPU instance lists near $100 an hour),
// so a mistyped figure such as 1e300 is refused, not carried into a plan.
const MaxUSDPerHour = 10_000

func checkRange(r []float64, lo, hi float64) error {
	if len(r) != 2 {
		return fmt.Errorf("want [low, high], got %d values", len(r))
	}
	if !(r[0] >= lo && r[1] <= hi && r[0] <= r[1]) {
		return fmt.Errorf("want %g <= low <= high <= %g, got [%g, %g]", lo, hi, r[0], r[1])
	}
	return nil
}

func checkProvenance(source, seen string) error {
	if strings.TrimSpace(source) == "" {
		return errors.New("missing source (a URL or document)")
	}
	if _, err := time.Parse(time.DateOnly, seen); err != nil {
		return fmt.Errorf("seen must be a date YYYY-MM-DD, got %q", seen)
	}
	return nil
}

func sortedCapacities(m map[Capacity]*Quote) []Capacity {
	cs := make([]Capacity, 0, len(m))
	for c := range m {
		cs = append(cs, c)
	}
	slices.Sort(cs)
	return cs
}

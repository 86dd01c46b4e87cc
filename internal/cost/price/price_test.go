package price

import (
	"errors"
	"github.com/corral-sched/corral/internal/cost/commit"
	"math"
	"strings"
	"testing"
	"time"
)

func TestDefaultCatalogParsesAndEveryFigureHasProvenance(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Offers) < 8 {
		t.Fatalf("catalog has %d offers, want the families people use", len(c.Offers))
	}
	for _, o := range c.Offers {
		for cap, q := range o.Prices {
			if q.Source == "" {
				t.Errorf("%s %s: no source", o.Name(), cap)
			}
			if _, err := time.Parse(time.DateOnly, q.Seen); err != nil {
				t.Errorf("%s %s: seen %q is not a date", o.Name(), cap, q.Seen)
			}
			p, err := o.PerGPUHour(cap)
			if err != nil {
				t.Errorf("%s %s: %v", o.Name(), cap, err)
				continue
			}
			if p.USDPerGPUHour <= 0 || math.IsNaN(p.USDPerGPUHour) {
				t.Errorf("%s %s: price %g", o.Name(), cap, p.USDPerGPUHour)
			}
		}
		if in := o.Interruption; in != nil && (in.Source == "" || in.Seen == "") {
			t.Errorf("%s: interruption without provenance", o.Name())
		}
	}
	if len(c.Unknown) == 0 {
		t.Error("catalog records nothing as unknown; it should say what was not found")
	}
}

func TestCheaperCapacityIsCheaper(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range c.Offers {
		od, err := o.PerGPUHour(OnDemand)
		if errors.Is(err, ErrUnknown) {
			continue // not sold on demand
		}
		for _, cap := range []Capacity{Spot, Reserved1y, Reserved3y, ReservedBlock} {
			p, err := o.PerGPUHour(cap)
			if errors.Is(err, ErrUnknown) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.USDPerGPUHour >= od.USDPerGPUHour {
				t.Errorf("%s: %s %g not below on-demand %g", o.Name(), cap, p.USDPerGPUHour, od.USDPerGPUHour)
			}
		}
	}
}

func TestPerGPUHourForms(t *testing.T) {
	o := &Offer{Provider: "x", Instance: "x.8", Region: "r", GPU: "H100-80GB", GPUs: 8, Prices: map[Capacity]*Quote{
		OnDemand:   {USDPerHour: 80, Source: "s", Seen: "2026-01-01"},
		Spot:       {USDPerHourRange: []float64{10, 30}, AgainstOnDemand: 100, Source: "s", Seen: "2026-01-01"},
		Reserved1y: {DiscountRange: []float64{0.25, 0.5}, Source: "s", Seen: "2026-01-01"},
		Reserved3y: {USDPerHourRange: []float64{20, 40}, AgainstOnDemand: 80, Source: "s", Seen: "2026-01-01"},
	}}
	tests := []struct {
		cap  Capacity
		want float64
	}{
		{OnDemand, 80.0 / 8},
		// observed 10-30: the highest observed price, whatever the on-demand
		// price of the snapshot was (no old discount applied to today's price).
		{Spot, 30.0 / 8},
		// 25-50% off: the conservative end is 25% off 80.
		{Reserved1y, 60.0 / 8},
		// observed against today's on-demand: the highest observed price.
		{Reserved3y, 40.0 / 8},
	}
	for _, tt := range tests {
		p, err := o.PerGPUHour(tt.cap)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(p.USDPerGPUHour-tt.want) > 1e-9 {
			t.Errorf("%s: got %g, want %g", tt.cap, p.USDPerGPUHour, tt.want)
		}
		if tt.cap != OnDemand && p.How == "" {
			t.Errorf("%s: derived price does not say how", tt.cap)
		}
	}
}

func TestUnknownPriceSaysWhatIsMissing(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.Find("A10G", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.PerGPUHour(Reserved3y)
	if !errors.Is(err, ErrUnknown) {
		t.Fatalf("got %v, want ErrUnknown", err)
	}
	for _, want := range []string{"reserved-3y", "A10G", "g5.xlarge"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if _, err := c.Find("B200-180GB", ""); !errors.Is(err, ErrUnknown) {
		t.Errorf("Find(B200): got %v, want ErrUnknown", err)
	}
	if _, err := c.Find("H100-80GB", "nope"); err == nil || !strings.Contains(err.Error(), "p5") {
		t.Errorf("Find(H100, nope): got %v, want an error listing the families", err)
	}
}

func TestFindByFamilyAndDefaultOrder(t *testing.T) {
	c, _ := Default()
	o, err := c.Find("H100", "")
	if err != nil || o.Family != "p5" {
		t.Fatalf("default H100 offer: %v %v, want p5 (first in the file)", o, err)
	}
	o, err = c.Find("H100-80GB", "a3-highgpu")
	if err != nil || o.Provider != "gcp" {
		t.Fatalf("a3-highgpu: %v %v", o, err)
	}
}

func TestOverridesApply(t *testing.T) {
	base, _ := Default()
	over, err := Parse([]byte(`
offers:
  - provider: aws
    instance: g5.xlarge
    region: us-east-1
    prices:
      reserved-1y:
        usd_per_hour: 0.61
        source: our 2026 contract
        seen: 2026-10-01
      on-demand:
        discount_range: [0.08, 0.08]
        source: enterprise discount
        seen: 2026-10-01
  - provider: acme
    family: a1
    instance: acme.big
    region: moon-1
    gpu: h100
    gpus: 4
    prices:
      on-demand: {usd_per_hour: 8, source: quote, seen: 2026-11-01}
`), "mine.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(base, over)
	// on-demand given as a discount has no usd_per_hour: Check must say so.
	if err := m.Check(); err == nil || !strings.Contains(err.Error(), "mine.yaml:3") {
		t.Fatalf("Check: %v, want an error at mine.yaml:3", err)
	}
	over.Offers[0].Prices[OnDemand] = &Quote{USDPerHour: 0.9, Source: "enterprise price sheet", Seen: "2026-10-01"}
	m = Merge(base, over)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	g5, _ := m.Find("A10G", "g5")
	r, err := g5.PerGPUHour(Reserved1y)
	if err != nil || r.USDPerGPUHour != 0.61 || r.Source != "our 2026 contract" {
		t.Fatalf("reserved-1y after override: %+v %v", r, err)
	}
	// Spot is kept from the base: its observed price, not moved by the new
	// on-demand price.
	sp, _ := g5.PerGPUHour(Spot)
	if want := 0.4177; math.Abs(sp.USDPerGPUHour-want) > 1e-12 {
		t.Errorf("spot after override: %g, want %g", sp.USDPerGPUHour, want)
	}
	acme, err := m.Find("H100-80GB", "a1")
	if err != nil || acme.GPUs != 4 {
		t.Fatalf("added offer: %v %v", acme, err)
	}
	// The base is untouched.
	g5base, _ := base.Find("A10G", "g5")
	if _, err := g5base.PerGPUHour(Reserved1y); !errors.Is(err, ErrUnknown) {
		t.Error("Merge modified its base")
	}
}

func TestBadFilesGiveFileLineErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown field", "offers:\n  - provider: aws\n    instance: x\n    regoin: r\n", []string{"f.yaml:4:", "regoin"}},
		{"not yaml", "offers: [\n", []string{"f.yaml:"}},
		{"empty", "", []string{"f.yaml: empty"}},
		{"unknown gpu", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    gpu: H999\n", []string{"f.yaml:2:", "H999"}},
		{"no source", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    prices:\n      spot:\n        usd_per_hour: 1\n        seen: 2026-01-01\n", []string{"f.yaml:6:", "spot", "missing source"}},
		{"bad date", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    prices:\n      spot: {usd_per_hour: 1, source: s, seen: last week}\n", []string{"f.yaml:6:", "YYYY-MM-DD"}},
		{"two forms", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    prices:\n      spot: {usd_per_hour: 1, discount_range: [0.1, 0.2], source: s, seen: 2026-01-01}\n", []string{"f.yaml:6:", "exactly one"}},
		{"bad range", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    prices:\n      spot: {discount_range: [0.5, 0.2], source: s, seen: 2026-01-01}\n", []string{"f.yaml:6:", "low <= high"}},
		{"bad capacity", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    prices:\n      reserved-5y: {usd_per_hour: 1, source: s, seen: 2026-01-01}\n", []string{"f.yaml:2:", "reserved-5y"}},
		{"no date", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    prices:\n      spot: {usd_per_hour: 1, source: s}\n", []string{"f.yaml:6:", "YYYY-MM-DD"}},
		{"not sold so", "offers:\n  - provider: gcp\n    instance: a3-highgpu-1g\n    region: r\n    sold_as: [spot, flex-start]\n    prices:\n      on-demand: {usd_per_hour: 1, source: s, seen: 2026-01-01}\n", []string{"f.yaml:7:", "sold only as spot, flex-start"}},
		{"bad sold_as", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    sold_as: [sometimes]\n", []string{"f.yaml:2:", "sometimes"}},
		{"bad band", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    interruption: {band: 7%, source: s, seen: 2026-01-01}\n", []string{"f.yaml:2:", "band \"7%\""}},
		{"band without source", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    interruption: {band: 5-10%, seen: 2026-01-01}\n", []string{"f.yaml:2:", "missing source"}},
		{"band without date", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    interruption: {band: 5-10%, source: s}\n", []string{"f.yaml:2:", "YYYY-MM-DD"}},
		{"bad as_of", "as_of: soon\noffers: []\n", []string{"f.yaml: as_of"}},
		{"unknown kind", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    prices:\n      reserved-1y: {usd_per_hour: 1, kind: savings, source: s, seen: 2026-01-01}\n", []string{"f.yaml:6:", `kind "savings": want discount`, "or capacity"}},
		{"kind off a commitment", "offers:\n  - provider: aws\n    instance: x\n    region: r\n    prices:\n      spot: {usd_per_hour: 1, kind: discount, source: s, seen: 2026-01-01}\n", []string{"f.yaml:6:", "only a commitment"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "f.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// Each commitment says how it is billed: 1- and 3-year ones are discounts
// unless their quote says capacity, a block is capacity; on-demand and
// spot have no kind.
func TestCommitmentKinds(t *testing.T) {
	c, err := Parse([]byte(`
offers:
  - provider: aws
    instance: p5.48xlarge
    region: us-east-1
    gpu: H100-80GB
    gpus: 8
    prices:
      on-demand: {usd_per_hour: 55.04, source: s, seen: 2026-11-01}
      reserved-1y: {usd_per_hour: 40, source: s, seen: 2026-11-01}
      reserved-3y: {usd_per_hour: 30, kind: capacity, source: a capacity reservation with a 3-year term, seen: 2026-11-01}
      reserved-block: {usd_per_hour: 39, source: s, seen: 2026-11-01}
`), "k.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := c.Offers[0]
	for capacity, want := range map[Capacity]commit.Kind{Reserved1y: commit.Discount, Reserved3y: commit.Capacity, ReservedBlock: commit.Capacity, OnDemand: ""} {
		p, err := o.PerGPUHour(capacity)
		if err != nil || p.Kind != want {
			t.Errorf("%s: kind %q (%v), want %q", capacity, p.Kind, err, want)
		}
	}
	if _, err := o.CommitmentKind(Spot); err == nil {
		t.Error("spot given a commitment kind")
	}
	def, _ := Default()
	p5, _ := def.Find("H100-80GB", "p5")
	if k, err := p5.CommitmentKind(ReservedBlock); err != nil || k != commit.Capacity {
		t.Errorf("catalog's Capacity Block: kind %q (%v), want capacity", k, err)
	}
}

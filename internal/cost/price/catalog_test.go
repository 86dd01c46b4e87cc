package price

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var day = func(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Every line corral prices lists has a source and a date, and its age is
// counted from the date given, not from the clock.
func TestLinesHaveSourcesDatesAndAges(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(time.DateOnly, c.AsOf); err != nil {
		t.Fatalf("catalog as_of %q: %v", c.AsOf, err)
	}
	lines, err := c.Lines(day("2026-12-01"))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]Line{}
	for _, l := range lines {
		if l.Source == "" || l.Seen == "" {
			t.Errorf("%s %s %s: no source or date", l.Provider, l.Instance, l.Capacity)
		}
		found[l.Instance+" "+string(l.Capacity)] = l
	}
	tests := []struct {
		key   string
		age   int
		stale bool
	}{
		{"p5.48xlarge on-demand", 22, false},      // 2026-11-09
		{"p5.48xlarge spot", 545, true},           // 2025-06-04: the snapshot predates the June 2025 cut
		{"p5.48xlarge reserved-block", 700, true}, // 2024-12-31
		{"p5.48xlarge ", 280, true},               // the interruption band, 2026-02-24
	}
	for _, tt := range tests {
		l, ok := found[tt.key]
		if !ok {
			t.Errorf("%s: not listed", tt.key)
			continue
		}
		if l.AgeDays != tt.age || l.Stale != tt.stale {
			t.Errorf("%s: age %d stale %v, want %d %v", tt.key, l.AgeDays, l.Stale, tt.age, tt.stale)
		}
	}
	if b := found["p5.48xlarge "].Band; b != "15-20%" {
		t.Errorf("p5 band %q", b)
	}
}

// Shapes are priced only as what they are sold as.
func TestSoldAsLimitsCapacities(t *testing.T) {
	c, _ := Default()
	o, err := c.Find("H100-80GB", "a3-highgpu")
	if err != nil {
		t.Fatal(err)
	}
	for _, cap := range []Capacity{OnDemand, Reserved1y, Reserved3y} {
		_, err := o.PerGPUHour(cap)
		if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "only as spot, flex-start") {
			t.Errorf("a3-highgpu-1g %s: %v, want not sold", cap, err)
		}
	}
	if _, err := o.PerGPUHour(Spot); err != nil {
		t.Errorf("a3-highgpu-1g spot: %v", err)
	}
}

// Boards of one model are told apart by their keys; the bare model is the
// first offer in the file.
func TestFormKeys(t *testing.T) {
	c, _ := Default()
	for model, want := range map[string]string{
		"A100-80GB-PCIE": "Standard_NC24ads_A100_v4",
		"A100-80GB-SXM":  "p4de.24xlarge",
		"A100-80GB":      "p4de.24xlarge",
		"H200":           "p5en.48xlarge",
	} {
		o, err := c.Find(model, "")
		if err != nil || o.Instance != want {
			t.Errorf("Find(%s) = %v, %v; want %s", model, o, err, want)
		}
	}
	for _, o := range c.Offers {
		if o.Form == "" {
			t.Errorf("%s: no form", o.Name())
		}
	}
}

func TestStaleWarnings(t *testing.T) {
	ps := []Price{
		{Provider: "aws", Instance: "p5.48xlarge", Region: "us-east-1", Capacity: Spot, Seen: "2025-06-04"},
		{Provider: "aws", Instance: "p5.48xlarge", Region: "us-east-1", Capacity: OnDemand, Seen: "2026-11-09"},
		{Provider: "aws", Instance: "p5.48xlarge", Region: "us-east-1", Capacity: Spot, Seen: "2025-06-04"},
	}
	got := StaleWarnings(ps, day("2026-12-01"))
	want := []string{"STALE: aws p5.48xlarge us-east-1 spot: older than 90 days; data of 2025-06-04, 545 days old on 2026-12-01; source "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := StaleWarnings(ps[1:2], day("2027-03-01")); len(got) != 1 {
		t.Errorf("on-demand of 2026-11-09 on 2027-03-01 (112 days): %q, want one warning", got)
	}
}

// The Capacity Block rate was read from a page that said it would change
// on 2025-01-01: on 2026-12-01 it is EXPIRED, said with its age and
// source, in the price lines and in the warnings; the spot price of the
// same offer is only STALE, and the on-demand price of 2026-11-09 fresh.
func TestExpiredQuoteIsSaid(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.Find("H100", "p5")
	if err != nil {
		t.Fatal(err)
	}
	now := day("2026-12-01")
	tests := []struct {
		capacity Capacity
		state    State
		age      int
	}{{ReservedBlock, Expired, 700}, {Spot, Stale, 545}, {OnDemand, Fresh, 22}}
	for _, tt := range tests {
		p, err := o.PerGPUHour(tt.capacity)
		if err != nil {
			t.Fatal(err)
		}
		if st, age := p.StateOn(now); st != tt.state || age != tt.age {
			t.Errorf("%s: %s %d days, want %s %d", tt.capacity, st, age, tt.state, tt.age)
		}
	}
	block, _ := o.PerGPUHour(ReservedBlock)
	ws := Warnings([]Price{block}, now)
	if len(ws) != 1 || ws[0].State != Expired || !strings.HasPrefix(ws[0].Message, "EXPIRED: aws p5.48xlarge us-east-1 reserved-block: valid until 2024-12-31; data of 2024-12-31, 700 days old on 2026-12-01; source http") {
		t.Errorf("warnings %+v", ws)
	}
	lines, _ := c.Lines(now)
	for _, l := range lines {
		if l.Instance == "p5.48xlarge" && l.Capacity == ReservedBlock && (!l.Expired || l.ValidUntil != "2024-12-31") {
			t.Errorf("line %+v: want expired, valid until 2024-12-31", l)
		}
		if l.Expired && l.Capacity != ReservedBlock {
			t.Errorf("line %+v expired", l)
		}
	}
	// The day it holds, it is not expired.
	if st, _ := block.StateOn(day("2024-12-31")); st != Fresh {
		t.Errorf("on its last day: %s", st)
	}
}

// Figures no price can have are refused with the file and line and why:
// a price of 1e300, a spot price above on demand, a date in the future, a
// validity that ends before its data.
func TestImplausibleFiguresRefused(t *testing.T) {
	offer := "offers:\n  - provider: aws\n    instance: x\n    region: r\n    gpu: H100\n    gpus: 8\n    prices:\n"
	tests := []struct {
		name, prices string
		want         []string
	}{
		{"price of 1e300", "      on-demand: {usd_per_hour: 1e300, source: s, seen: 2026-01-01}\n", []string{"f.yaml:8:", "usd_per_hour 1e+300", "at most 10000"}},
		{"range of 1e300", "      on-demand: {usd_per_hour: 10, source: s, seen: 2026-01-01}\n      spot: {usd_per_hour_range: [1, 1e300], source: s, seen: 2026-01-01}\n", []string{"f.yaml:9:", "usd_per_hour_range"}},
		{"spot above on-demand", "      on-demand: {usd_per_hour: 10, source: s, seen: 2026-01-01}\n      spot: {usd_per_hour: 14.5, source: s, seen: 2026-01-01}\n", []string{"f.yaml:9:", "spot $14.5 an hour is above on-demand $10: refused"}},
		{"seen in the future", "      on-demand: {usd_per_hour: 10, source: s, seen: 2030-01-01}\n", []string{"f.yaml:8:", "seen 2030-01-01 is after today (2026-12-01)"}},
		{"valid until before seen", "      on-demand: {usd_per_hour: 10, source: s, seen: 2026-01-01, valid_until: 2025-01-01}\n", []string{"f.yaml:8:", "valid_until 2025-01-01 is before seen 2026-01-01"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(offer+tt.prices), "f.yaml")
			if err == nil {
				err = c.Check()
			}
			if err == nil {
				err = c.CheckDates(day("2026-12-01"))
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	// The default catalog passes every check on the day it was checked.
	c, _ := Default()
	if err := c.CheckDates(day(c.AsOf)); err != nil {
		t.Errorf("default catalog: %v", err)
	}
}

func TestBandGivesMonthlyRange(t *testing.T) {
	c, _ := Default()
	o, _ := c.Find("H100", "p5")
	if r := o.Interruption.PerMonth; len(r) != 2 || r[0] != 0.15 || r[1] != 0.20 {
		t.Errorf("p5 band 15-20%%: per month %v", r)
	}
}

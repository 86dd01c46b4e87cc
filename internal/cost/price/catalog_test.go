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
	want := []string{"aws p5.48xlarge us-east-1 spot: data of 2025-06-04, 545 days old on 2026-12-01"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := StaleWarnings(ps[1:2], day("2027-03-01")); len(got) != 1 {
		t.Errorf("on-demand of 2026-11-09 on 2027-03-01 (112 days): %q, want one warning", got)
	}
}

func TestBandGivesMonthlyRange(t *testing.T) {
	c, _ := Default()
	o, _ := c.Find("H100", "p5")
	if r := o.Interruption.PerMonth; len(r) != 2 || r[0] != 0.15 || r[1] != 0.20 {
		t.Errorf("p5 band 15-20%%: per month %v", r)
	}
}

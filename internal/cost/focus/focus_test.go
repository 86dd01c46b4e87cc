package focus

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/cost/alloc"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// fixtureBill: 8 H100s and 2 L4s for 10 hours; ml holds 4 H100s
// throughout, web 2 H100s for 5 hours and an L4 for 4; $50 of shared cost.
func fixtureBill(t *testing.T, idle alloc.IdleMode) *alloc.Bill {
	t.Helper()
	h := func(x float64) time.Time { return t0.Add(time.Duration(x * float64(time.Hour))) }
	b, err := alloc.Allocate(alloc.Input{Start: t0, End: h(10), Idle: idle, SharedUSD: 50,
		Capacity: map[string]float64{"H100-80GB": 8, "L4": 2}, Prices: map[string]float64{"H100-80GB": 3.93, "L4": 0.805},
		Records: []alloc.Record{
			{ID: "j1", Owner: "ml", Model: "H100-80GB", GPUs: 4, Start: t0, End: h(10)},
			{ID: "j2", Owner: "web", Model: "H100-80GB", GPUs: 2, Start: h(2), End: h(7)},
			{ID: "j3", Owner: "web", Model: "L4", GPUs: 1, Start: h(1), End: h(5)},
		}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var meta = Meta{Provider: "corral", AccountID: "lab", AccountName: "lab cluster", Service: "corral server", OwnerKind: "tenant"}

// The export of a bill matches its golden file, validates against the
// claimed columns, and its BilledCost adds up to the bill's total.
func TestExportValidates(t *testing.T) {
	for _, idle := range []alloc.IdleMode{alloc.IdleSeparate, alloc.IdleShare} {
		t.Run(string(idle), func(t *testing.T) {
			b := fixtureBill(t, idle)
			var buf bytes.Buffer
			if err := Write(&buf, b, meta); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "focus-idle-"+string(idle)+".csv")
			if *update {
				os.WriteFile(golden, buf.Bytes(), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil || !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("export differs from %s (go test -update rewrites it): %v\n%s", golden, err, buf.String())
			}
			sum, err := Validate(bytes.NewReader(buf.Bytes()), "export.csv")
			if err != nil {
				t.Fatal(err)
			}
			if sum.BilledUSD() != b.Total.String() || b.Total.String() != "380.50" {
				t.Errorf("BilledCost sums to %s over %d rows, bill total %s, want 380.50 (314.40 of H100s, 16.10 of L4s, 50 shared)", sum.BilledUSD(), sum.Rows, b.Total)
			}
		})
	}
}

// A broken file is refused, naming the row and the column.
func TestValidateRefuses(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, fixtureBill(t, alloc.IdleSeparate), meta); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	lines := strings.Split(strings.TrimSuffix(good, "\n"), "\n")
	header := strings.Split(lines[0], ",")
	col := func(name string) int {
		for i, h := range header {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	// setField replaces one plain field (before any quoted one) on line n
	// of the file (the header is line 1).
	setField := func(n int, name, v string) string {
		ls := append([]string(nil), lines...)
		f := strings.SplitN(ls[n-1], ",", col(name)+2)
		f[col(name)] = v
		ls[n-1] = strings.Join(f, ",")
		return strings.Join(ls, "\n") + "\n"
	}
	cases := []struct{ name, file, want string }{
		{"missing column", strings.Replace(good, "ChargeCategory,", "Category,", 1), "bad.csv:1: missing column ChargeCategory"},
		{"bad date", setField(3, "ChargePeriodEnd", "2026-11-01 10:00"), `bad.csv:3: column ChargePeriodEnd: "2026-11-01 10:00" is not an ISO 8601 UTC date`},
		{"offset date", setField(2, "BillingPeriodStart", "2026-11-01T00:00:00+01:00"), "bad.csv:2: column BillingPeriodStart"},
		{"end before start", setField(4, "ChargePeriodStart", "2026-11-02T00:00:00Z"), "bad.csv:4: column ChargePeriodStart: 2026-11-02T00:00:00Z is not before ChargePeriodEnd"},
		{"unknown category", setField(2, "ChargeCategory", "Rental"), `bad.csv:2: column ChargeCategory: "Rental" is not an allowed value`},
		{"bad currency", setField(2, "BillingCurrency", "usd"), `bad.csv:2: column BillingCurrency: "usd" is not an ISO 4217`},
		{"cost not a decimal", setField(2, "BilledCost", "$157.20"), `bad.csv:2: column BilledCost: "$157.20" is not a decimal`},
		{"null cost", setField(3, "EffectiveCost", ""), "bad.csv:3: column EffectiveCost: is empty"},
		{"usage without quantity", setField(2, "PricingQuantity", ""), "bad.csv:2: column PricingQuantity: is empty"},
		{"price times quantity is not the cost", setField(2, "ListCost", "157.30"), "bad.csv:2: column ListCost: 157.30 is not ListUnitPrice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Validate(strings.NewReader(c.file), "bad.csv")
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant one containing %q", err, c.want)
			}
		})
	}
}

// A bill of less than a second, or one that does not start or end on a
// whole second, exports a period that covers it and validates.
func TestExportOfAShortPeriodValidates(t *testing.T) {
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	for _, c := range []struct {
		name             string
		start, end       time.Time
		wantStart, wantE string
	}{
		{"under a second", ms(100), ms(400), "2026-11-01T00:00:00Z", "2026-11-01T00:00:01Z"},
		{"across a second", ms(900), ms(1200), "2026-11-01T00:00:00Z", "2026-11-01T00:00:02Z"},
		{"whole seconds", ms(1000), ms(3000), "2026-11-01T00:00:01Z", "2026-11-01T00:00:03Z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := alloc.Allocate(alloc.Input{Start: c.start, End: c.end, Idle: alloc.IdleSeparate,
				Capacity: map[string]float64{"H100-80GB": 8}, Prices: map[string]float64{"H100-80GB": 3.93},
				Records: []alloc.Record{{ID: "j1", Owner: "ml", Model: "H100-80GB", GPUs: 8, Start: c.start, End: c.end}}})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := Write(&buf, b, meta); err != nil {
				t.Fatal(err)
			}
			if _, err := Validate(bytes.NewReader(buf.Bytes()), "short.csv"); err != nil {
				t.Fatalf("the export of a %v bill does not validate: %v", c.end.Sub(c.start), err)
			}
			rows, err := csv.NewReader(&buf).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			at := map[string]int{}
			for i, h := range rows[0] {
				at[h] = i
			}
			for _, r := range rows[1:] {
				if s, e := r[at["ChargePeriodStart"]], r[at["ChargePeriodEnd"]]; s != c.wantStart || e != c.wantE {
					t.Errorf("period %s to %s, want %s to %s", s, e, c.wantStart, c.wantE)
				}
			}
		})
	}
}

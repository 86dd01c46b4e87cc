package main

import (
	"math"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
)

// Without --spot-rate, spot nodes are interrupted at the high end of the
// catalog's published band for their GPU offer (p5: 15-20% a month), not
// at a made-up rate; a model without a band needs the flag.
func TestSpotRateFromTheCatalogBand(t *testing.T) {
	cat, err := planCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	h100, _ := fleet.Synthetic{Nodes: 4}.Build()
	l4, _ := fleet.Synthetic{Nodes: 4, GPUModel: "L4"}.Build()
	tests := []struct {
		name  string
		o     simOptions
		f     *fleet.Fleet
		want  float64
		error string
	}{
		{"band", simOptions{spotShare: 0.5, spotRate: -1}, h100, -math.Log(0.8) / 730, ""},
		{"flag", simOptions{spotShare: 0.5, spotRate: 0.05}, h100, 0.05, ""},
		{"no spot", simOptions{spotRate: -1}, h100, 0, ""},
		{"no band", simOptions{spotShare: 0.5, spotRate: -1}, l4, 0, "no published interruption band for L4"},
	}
	for _, tt := range tests {
		got, err := spotRate(tt.o, tt.f, cat)
		if tt.error != "" {
			if err == nil || !strings.Contains(err.Error(), tt.error) || !strings.Contains(err.Error(), "--spot-rate") {
				t.Errorf("%s: %v, want an error naming %q and --spot-rate", tt.name, err, tt.error)
			}
			continue
		}
		if err != nil || math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("%s: rate %g, %v; want %g", tt.name, got, err, tt.want)
		}
	}
}

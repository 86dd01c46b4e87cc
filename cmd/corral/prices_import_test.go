package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A provider's price file imported, then a plan priced from it: the
// plan's commitment and on-demand prices are the file's, with its name
// and date as their source.
func TestPricesImportThenPlan(t *testing.T) {
	dir := t.TempDir()
	demand := h100Demand(t, dir)
	fixtures := filepath.Join("..", "..", "internal", "cost", "priceimport", "testdata")
	tests := []struct {
		format, file, seen, term, family string
		committed, onDemand              float64 // per GPU-hour
	}{
		{"aws", "aws-ec2-offer.json", "", "1y", "", 36.0 / 8, 55.04 / 8},
		{"aws", "aws-savings-plan.json", "", "3y", "", 24.768 / 8, 55.04 / 8},
		{"azure", "azure-retail.json", "2026-11-28", "1y", "H100=ND-H100-v5", 70.0 / 8, 98.32 / 8},
		{"gcp", "gcp-skus.json", "2026-11-25", "1y", "H100=gpu-h100-80gb", 6.857245, 9.796065},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			file := filepath.Join(fixtures, tt.file)
			prices := filepath.Join(dir, tt.file+".yaml")
			args := []string{"prices", "import", "--format", tt.format, "--out", prices}
			if tt.seen != "" {
				args = append(args, "--seen", tt.seen)
			}
			_, errOut, code := runCLI(t, append(args, file)...)
			if code != 0 || !strings.Contains(errOut, "prices of") {
				t.Fatalf("import: exit %d: %s", code, errOut)
			}
			jsonPath := filepath.Join(dir, tt.file+".plan.json")
			args = []string{"plan", "--demand", demand, "--now", "2026-12-01", "--quiet", "--term", tt.term, "--prices", prices, "--json", jsonPath}
			if tt.family != "" {
				args = append(args, "--family", tt.family)
			}
			_, errOut, code = runCLI(t, args...)
			if code != 0 {
				t.Fatalf("plan: exit %d: %s", code, errOut)
			}
			var doc struct {
				Plan struct {
					Models []struct {
						Prices struct {
							Committed struct {
								USD    float64 `json:"usd_per_gpu_hour"`
								Source string  `json:"source"`
							} `json:"committed"`
							OnDemand struct {
								USD float64 `json:"usd_per_gpu_hour"`
							} `json:"on_demand"`
						} `json:"prices"`
					} `json:"models"`
				} `json:"plan"`
			}
			data, _ := os.ReadFile(jsonPath)
			if err := json.Unmarshal(data, &doc); err != nil || len(doc.Plan.Models) != 1 {
				t.Fatalf("plan json: %v %s", err, data)
			}
			p := doc.Plan.Models[0].Prices
			if !near(p.Committed.USD, tt.committed) || !near(p.OnDemand.USD, tt.onDemand) || !strings.Contains(p.Committed.Source, tt.file) {
				t.Errorf("committed %+v, on demand %+v; want %g and %g from %s", p.Committed, p.OnDemand, tt.committed, tt.onDemand, tt.file)
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

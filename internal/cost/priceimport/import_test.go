package priceimport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/cost/price"
)

// Each fixture in testdata is written from the format its provider
// documents (testdata/README.md names each page): the importer keeps Linux
// instance prices of known GPU instances, on demand, spot and committed,
// resolves purchase and payment options to the highest hourly price, and
// every figure carries its source and date.
func TestImportFixtures(t *testing.T) {
	type want struct {
		offer    string // provider/instance/region
		capacity price.Capacity
		usd      float64
		seen     string
		note     string // a part of the note
	}
	tests := []struct {
		format, file, seen string
		offers             int
		want               []want
		skipped            string
	}{
		{"aws", "aws-ec2-offer.json", "", 2, []want{
			{"aws/p5.48xlarge/us-east-1", price.OnDemand, 55.04, "2026-11-20", "OnDemand term"},
			// No Upfront $36 an hour against All Upfront $297,840 / 8,760 h = $34: the higher.
			{"aws/p5.48xlarge/us-east-1", price.Reserved1y, 36, "2026-11-20", "All Upfront: $34.0000 an hour effective"},
			// Partial Upfront: $262,800 / 26,280 h + $14.
			{"aws/p5.48xlarge/us-east-1", price.Reserved3y, 24, "2026-11-20", "3yr standard Partial Upfront"},
			{"aws/g5.xlarge/us-east-1", price.OnDemand, 1.006, "2026-11-20", ""},
		}, "aws p9.48xlarge: 8 GPUs of a model corral's shapes do not know"},
		{"aws", "aws-savings-plan.json", "", 2, []want{
			{"aws/p5.48xlarge/us-east-1", price.Reserved1y, 38.528, "2026-11-18", "1 year No Upfront Compute Savings Plan (No Upfront)"},
			{"aws/p5.48xlarge/us-east-1", price.Reserved3y, 24.768, "2026-11-18", "All Upfront"},
			{"aws/g5.xlarge/us-east-1", price.Reserved1y, 0.7042, "2026-11-18", ""},
		}, ""},
		{"azure", "azure-retail.json", "2026-11-28", 1, []want{
			{"azure/Standard_ND96isr_H100_v5/eastus", price.OnDemand, 98.32, "2026-11-28", "effective 2024-09-01"},
			{"azure/Standard_ND96isr_H100_v5/eastus", price.Spot, 39.33, "2026-11-28", "Spot"},
			// The savings plan's $70 an hour against the reservation's $560,640 / 8,760 h = $64.
			{"azure/Standard_ND96isr_H100_v5/eastus", price.Reserved1y, 70, "2026-11-28", "reservation, 1 Year: $560640 for the term, $64.0000 an hour"},
			{"azure/Standard_ND96isr_H100_v5/eastus", price.Reserved3y, 48, "2026-11-28", "$45.0000 an hour"},
		}, ""},
		{"gcp", "gcp-skus.json", "2026-11-25", 3, []want{
			{"gcp/gpu-h100-80gb/us-central1", price.OnDemand, 9.796065, "2026-11-25", "the GPU alone"},
			{"gcp/gpu-h100-80gb/us-central1", price.Spot, 2.25, "2026-11-25", "Preemptible"},
			{"gcp/gpu-h100-80gb/us-central1", price.Reserved1y, 6.857245, "2026-11-25", "Commit1Yr"},
			{"gcp/gpu-h100-80gb/us-central1", price.Reserved3y, 4.40823, "2026-11-25", "Commit3Yr"},
			{"gcp/gpu-h100-80gb/us-east4", price.OnDemand, 9.796065, "2026-11-25", ""},
			{"gcp/gpu-l4/us-central1", price.OnDemand, 0.56, "2026-11-25", ""},
		}, ""},
		{"negotiated", "negotiated.csv", "", 2, []want{
			{"aws/p5.48xlarge/us-east-1", price.Reserved1y, 33.5, "2026-11-15", "private pricing term"},
			{"aws/g5.xlarge/us-east-1", price.Reserved1y, 0.61, "2026-11-15", ""},
		}, ""},
	}
	base, err := price.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Import(tt.format, data, Options{Name: tt.file, Seen: tt.seen, Base: base})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Catalog.Offers) != tt.offers {
				t.Errorf("%d offers, want %d", len(r.Catalog.Offers), tt.offers)
			}
			for _, w := range tt.want {
				q := quote(r.Catalog, w.offer, w.capacity)
				if q == nil {
					t.Errorf("%s %s: not imported", w.offer, w.capacity)
					continue
				}
				source := tt.file // the file, or for negotiated rates the agreement each row names
				if tt.format == "negotiated" {
					source = "EDP amendment 4"
				}
				if q.USDPerHour < w.usd-1e-9 || q.USDPerHour > w.usd+1e-9 || q.Seen != w.seen || !strings.Contains(q.Source, source) ||
					!strings.Contains(q.Note, w.note) {
					t.Errorf("%s %s: %+v, want $%g seen %s, note with %q", w.offer, w.capacity, q, w.usd, w.seen, w.note)
				}
			}
			if tt.skipped != "" && !strings.Contains(strings.Join(r.Skipped, "\n"), tt.skipped) {
				t.Errorf("skipped %q, want %q", r.Skipped, tt.skipped)
			}
			// The document reads back and lays over the default catalog.
			doc, err := Encode(r.Catalog)
			if err != nil {
				t.Fatal(err)
			}
			over, err := price.Parse(doc, "imported.yaml")
			if err != nil {
				t.Fatalf("%v\n%s", err, doc)
			}
			if err := price.Merge(base, over).Check(); err != nil {
				t.Errorf("merged: %v", err)
			}
		})
	}
}

func quote(c *price.Catalog, key string, capacity price.Capacity) *price.Quote {
	for _, o := range c.Offers {
		if o.Key() == strings.ToLower(key) {
			return o.Prices[capacity]
		}
	}
	return nil
}

// What a file cannot say is refused with the reason.
func TestImportErrors(t *testing.T) {
	tests := []struct{ name, format, data, seen, want string }{
		{"unknown format", "oracle", "{}", "", `format "oracle"`},
		{"not json", "aws", "<html>", "", "read AWS price list file"},
		{"no publication date", "aws", `{"products": {}, "terms": {}}`, "", "publicationDate"},
		{"azure without a date", "azure", `{"Items": []}`, "", "give the day it was fetched"},
		{"nothing of use", "gcp", `{"skus": []}`, "2026-11-25", "no GPU instance price found"},
		{"absurd price", "gcp", `{"skus": [{"skuId": "x", "description": "Nvidia L4 GPU running in Americas", "category": {"resourceFamily": "Compute", "resourceGroup": "GPU", "usageType": "OnDemand"}, "serviceRegions": ["us-central1"], "pricingInfo": [{"pricingExpression": {"usageUnit": "h", "tieredRates": [{"unitPrice": {"currencyCode": "USD", "units": "900000000"}}]}}]}]}`, "2026-11-25", "want the hourly price of one instance"},
		{"negotiated without a column", "negotiated", "provider,instance,region,capacity,usd_per_hour,source\n", "", `no column "seen"`},
		{"negotiated unknown instance", "negotiated", "provider,instance,region,capacity,usd_per_hour,source,seen\naws,x9.large,us-east-1,on-demand,1,s,2026-01-01\n", "", "line 2: instance x9.large: GPU model and count not known"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Import(tt.format, []byte(tt.data), Options{Name: "f", Seen: tt.seen})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

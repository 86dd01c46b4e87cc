package priceimport

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/corral-sched/corral/internal/cost/price"
)

// gcpDoc is where the Cloud Billing Catalog's SKU resource is described.
const gcpDoc = "Cloud Billing Catalog API SKUs, https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list"

// gcpResponse is a page of services.skus.list.
type gcpResponse struct {
	Skus []gcpSKU `json:"skus"`
}

type gcpSKU struct {
	SkuID       string `json:"skuId"`
	Description string `json:"description"`
	Category    struct {
		ResourceFamily string `json:"resourceFamily"`
		ResourceGroup  string `json:"resourceGroup"`
		UsageType      string `json:"usageType"`
	} `json:"category"`
	ServiceRegions []string `json:"serviceRegions"`
	PricingInfo    []struct {
		EffectiveTime     string `json:"effectiveTime"`
		PricingExpression struct {
			UsageUnit   string `json:"usageUnit"`
			TieredRates []struct {
				StartUsageAmount float64 `json:"startUsageAmount"`
				UnitPrice        struct {
					CurrencyCode string `json:"currencyCode"`
					Units        string `json:"units"` // an int64, as JSON writes them: a string
					Nanos        int64  `json:"nanos"`
				} `json:"unitPrice"`
			} `json:"tieredRates"`
		} `json:"pricingExpression"`
	} `json:"pricingInfo"`
}

// gcpUsage maps a SKU's usage type to a capacity type.
var gcpUsage = map[string]price.Capacity{
	"OnDemand": price.OnDemand, "Preemptible": price.Spot, "Commit1Yr": price.Reserved1y, "Commit3Yr": price.Reserved3y,
}

// gcp reads Compute Engine GPU SKUs priced per hour. On GCP a GPU is
// billed apart from the machine type it is attached to: each offer is the
// GPU alone ("gpu-h100-80gb", one GPU), and its note says so.
func (b *builder) gcp(data []byte) error {
	var r gcpResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("read Cloud Billing Catalog SKUs: %w", err)
	}
	if b.opts.Seen == "" {
		return fmt.Errorf("a Cloud Billing Catalog response carries no date of its data: give the day it was fetched")
	}
	for _, sku := range r.Skus {
		c, ok := gcpUsage[sku.Category.UsageType]
		if sku.Category.ResourceFamily != "Compute" || sku.Category.ResourceGroup != "GPU" || !ok {
			continue
		}
		s, inst, ok := gcpGPU(sku.Description)
		if !ok {
			b.skip("gcp SKU %s %q: a GPU corral's shapes do not know", sku.SkuID, sku.Description)
			continue
		}
		usd, err := sku.hourly()
		if err != nil {
			b.skip("gcp SKU %s: %v", sku.SkuID, err)
			continue
		}
		for _, region := range sku.ServiceRegions {
			b.add("gcp", inst, region, s, c, &price.Quote{USDPerHour: usd, Source: b.source(gcpDoc), Seen: b.opts.Seen,
				Note: fmt.Sprintf("SKU %s %q, %s; the GPU alone: the machine type's vCPUs and memory are billed apart", sku.SkuID, sku.Description, sku.Category.UsageType)})
		}
	}
	return nil
}

// hourly is the first tier's unit price (units + nanos/1e9) of a SKU
// priced per hour ("h").
func (s gcpSKU) hourly() (float64, error) {
	if len(s.PricingInfo) == 0 {
		return 0, fmt.Errorf("no pricingInfo")
	}
	e := s.PricingInfo[0].PricingExpression
	if e.UsageUnit != "h" || len(e.TieredRates) == 0 {
		return 0, fmt.Errorf("priced per %q, not per hour", e.UsageUnit)
	}
	u := e.TieredRates[0].UnitPrice
	if u.CurrencyCode != "USD" {
		return 0, fmt.Errorf("priced in %q, not USD", u.CurrencyCode)
	}
	units := int64(0)
	if u.Units != "" {
		var err error
		if units, err = strconv.ParseInt(u.Units, 10, 64); err != nil {
			return 0, fmt.Errorf("unitPrice.units %q: %w", u.Units, err)
		}
	}
	usd := float64(units) + float64(u.Nanos)/1e9
	if usd <= 0 {
		return 0, fmt.Errorf("price %g", usd)
	}
	return usd, nil
}

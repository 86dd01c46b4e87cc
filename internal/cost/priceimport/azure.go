package priceimport

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/corral-sched/corral/internal/cost/price"
)

// azureDoc is where the Azure Retail Prices API response is described.
const azureDoc = "Azure Retail Prices API, https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices"

// azureResponse is a page of the Azure Retail Prices API.
type azureResponse struct {
	Items []azureItem `json:"Items"`
}

type azureItem struct {
	CurrencyCode       string  `json:"currencyCode"`
	RetailPrice        float64 `json:"retailPrice"`
	ArmRegionName      string  `json:"armRegionName"`
	EffectiveStartDate string  `json:"effectiveStartDate"`
	MeterName          string  `json:"meterName"`
	ProductName        string  `json:"productName"`
	SkuName            string  `json:"skuName"`
	ServiceName        string  `json:"serviceName"`
	UnitOfMeasure      string  `json:"unitOfMeasure"`
	Type               string  `json:"type"`
	ReservationTerm    string  `json:"reservationTerm"`
	ArmSkuName         string  `json:"armSkuName"`
	SavingsPlan        []struct {
		RetailPrice float64 `json:"retailPrice"`
		Term        string  `json:"term"`
	} `json:"savingsPlan"`
}

// azure reads Linux virtual machine prices: Consumption items on demand
// and spot (skuName "... Spot"), Reservation items for 1 or 3 years, whose
// price is for the whole term, and the savingsPlan rates of a
// Consumption item, which are per hour. Low-priority and Windows meters
// are left out.
func (b *builder) azure(data []byte) error {
	var r azureResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("read Azure Retail Prices response: %w", err)
	}
	if b.opts.Seen == "" {
		return fmt.Errorf("an Azure response carries no date of its own: give the day it was fetched")
	}
	for _, it := range r.Items {
		if it.ServiceName != "Virtual Machines" || it.CurrencyCode != "USD" || it.UnitOfMeasure != "1 Hour" ||
			strings.Contains(it.ProductName, "Windows") || strings.Contains(it.SkuName, "Low Priority") {
			continue
		}
		s, ok := b.shapeOf("azure", it.ArmSkuName, azureShapes)
		if !ok {
			continue
		}
		b.azureItem(it, s)
	}
	return nil
}

func (b *builder) azureItem(it azureItem, s shape) {
	quote := func(usd float64, note string) *price.Quote {
		return &price.Quote{USDPerHour: usd, Source: b.source(azureDoc), Seen: b.opts.Seen,
			Note: fmt.Sprintf("%s, effective %s", note, dateOr(it.EffectiveStartDate))}
	}
	add := func(c price.Capacity, q *price.Quote) { b.add("azure", it.ArmSkuName, it.ArmRegionName, s, c, q) }
	switch it.Type {
	case "Consumption":
		if strings.HasSuffix(it.SkuName, " Spot") {
			add(price.Spot, quote(it.RetailPrice, "Consumption, "+it.SkuName))
			return
		}
		add(price.OnDemand, quote(it.RetailPrice, "Consumption, "+it.SkuName))
		for _, sp := range it.SavingsPlan {
			if years, ok := azureYears(sp.Term); ok {
				c, _ := termCapacity(years)
				add(c, quote(sp.RetailPrice, fmt.Sprintf("savings plan, %s: $%.4f an hour", sp.Term, sp.RetailPrice)))
			}
		}
	case "Reservation":
		years, ok := azureYears(it.ReservationTerm)
		if !ok {
			b.skip("azure %s: reservation term %q", it.ArmSkuName, it.ReservationTerm)
			return
		}
		c, _ := termCapacity(years)
		usd := it.RetailPrice / hoursOf(years)
		add(c, quote(usd, fmt.Sprintf("reservation, %s: $%.0f for the term, $%.4f an hour", it.ReservationTerm, it.RetailPrice, usd)))
	}
}

// azureYears reads "1 Year" and "3 Years".
func azureYears(term string) (int, bool) {
	switch strings.TrimSpace(term) {
	case "1 Year":
		return 1, true
	case "3 Years":
		return 3, true
	}
	return 0, false
}

package priceimport

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/cost/price"
)

// awsSavingsPlanFile is a Savings Plans service price list file: the plans
// as products, and for each plan its rates for the usage it discounts.
type awsSavingsPlanFile struct {
	PublicationDate string `json:"publicationDate"`
	Products        []struct {
		SKU        string            `json:"sku"`
		Attributes map[string]string `json:"attributes"`
	} `json:"products"`
	Terms struct {
		SavingsPlan []struct {
			SKU                 string `json:"sku"`
			Description         string `json:"description"`
			EffectiveDate       string `json:"effectiveDate"`
			LeaseContractLength struct {
				Duration int    `json:"duration"`
				Unit     string `json:"unit"`
			} `json:"leaseContractLength"`
			Rates []awsRate `json:"rates"`
		} `json:"savingsPlan"`
	} `json:"terms"`
}

type awsRate struct {
	DiscountedUsageType    string `json:"discountedUsageType"`
	DiscountedOperation    string `json:"discountedOperation"`
	DiscountedServiceCode  string `json:"discountedServiceCode"`
	Unit                   string `json:"unit"`
	DiscountedRegionCode   string `json:"discountedRegionCode"`
	DiscountedInstanceType string `json:"discountedInstanceType"`
	DiscountedRate         struct {
		Price    string `json:"price"`
		Currency string `json:"currency"`
	} `json:"discountedRate"`
}

// awsSavingsPlans reads the rates a Savings Plan charges for Linux EC2
// instance-hours on shared tenancy: a 1- or 3-year commitment's price.
func (b *builder) awsSavingsPlans(data []byte) error {
	var f awsSavingsPlanFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("read AWS Savings Plans file: %w", err)
	}
	seen, err := day(f.PublicationDate)
	if err != nil {
		return fmt.Errorf("publicationDate: %w", err)
	}
	option := map[string]string{}
	for _, p := range f.Products {
		option[p.SKU] = p.Attributes["purchaseOption"]
	}
	for _, plan := range f.Terms.SavingsPlan {
		l := plan.LeaseContractLength
		c, ok := termCapacity(l.Duration)
		if !ok || !strings.EqualFold(l.Unit, "year") {
			b.skip("savings plan %s: a term of %d %s", plan.SKU, l.Duration, l.Unit)
			continue
		}
		for _, r := range plan.Rates {
			b.awsRate(r, c, seen, fmt.Sprintf("%s (%s), effective %s", plan.Description, option[plan.SKU], dateOr(plan.EffectiveDate)))
		}
	}
	return nil
}

// awsRate adds one rate of a plan: Linux (RunInstances) box usage only.
func (b *builder) awsRate(r awsRate, c price.Capacity, seen, what string) {
	if r.DiscountedServiceCode != "AmazonEC2" || r.DiscountedOperation != "RunInstances" || r.Unit != "Hrs" ||
		!strings.Contains(r.DiscountedUsageType, "BoxUsage") || r.DiscountedRate.Currency != "USD" {
		return
	}
	s, ok := b.shapeOf("aws", r.DiscountedInstanceType, awsShapes)
	if !ok {
		return
	}
	usd, err := strconv.ParseFloat(r.DiscountedRate.Price, 64)
	if err != nil || usd <= 0 {
		b.skip("savings plan rate for %s: price %q", r.DiscountedInstanceType, r.DiscountedRate.Price)
		return
	}
	note := fmt.Sprintf("%s: $%.4f an hour", what, usd)
	b.add("aws", r.DiscountedInstanceType, r.DiscountedRegionCode, s, c, &price.Quote{USDPerHour: usd, Source: b.source(awsDoc), Seen: seen, Note: note})
}

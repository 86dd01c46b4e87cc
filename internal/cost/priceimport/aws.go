package priceimport

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/cost/price"
)

// awsDoc is where the AWS Price List formats are described.
const awsDoc = "AWS Price List, https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/reading-service-price-list-files.html"

// awsOfferFile is a service price list file (bulk offer file) of EC2:
// products by SKU, and terms OnDemand and Reserved by SKU and offer term.
type awsOfferFile struct {
	PublicationDate string                `json:"publicationDate"`
	Products        map[string]awsProduct `json:"products"`
	Terms           struct {
		OnDemand map[string]map[string]awsTerm `json:"OnDemand"`
		Reserved map[string]map[string]awsTerm `json:"Reserved"`
	} `json:"terms"`
}

type awsProduct struct {
	SKU           string            `json:"sku"`
	ProductFamily string            `json:"productFamily"`
	Attributes    map[string]string `json:"attributes"`
}

type awsTerm struct {
	EffectiveDate   string                  `json:"effectiveDate"`
	PriceDimensions map[string]awsDimension `json:"priceDimensions"`
	TermAttributes  map[string]string       `json:"termAttributes"`
}

type awsDimension struct {
	Unit         string            `json:"unit"`
	PricePerUnit map[string]string `json:"pricePerUnit"`
}

// aws reads an EC2 offer file or a Savings Plans rate file, told apart by
// their terms: a Savings Plans file has terms.savingsPlan.
func (b *builder) aws(data []byte) error {
	var probe struct {
		Terms map[string]json.RawMessage `json:"terms"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return fmt.Errorf("read AWS price list file: %w", err)
	}
	if _, ok := probe.Terms["savingsPlan"]; ok {
		return b.awsSavingsPlans(data)
	}
	var f awsOfferFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("read AWS offer file: %w", err)
	}
	seen, err := day(f.PublicationDate)
	if err != nil {
		return fmt.Errorf("publicationDate: %w", err)
	}
	for _, sku := range slices.Sorted(maps.Keys(f.Products)) {
		p := f.Products[sku]
		inst, region, s, ok := b.awsInstance(p)
		if !ok {
			continue
		}
		for _, t := range sortedTerms(f.Terms.OnDemand[sku]) {
			if usd, ok := t.hourly(0); ok {
				b.add("aws", inst, region, s, price.OnDemand, &price.Quote{USDPerHour: usd, Source: b.source(awsDoc), Seen: seen,
					Note: "OnDemand term, effective " + dateOr(t.EffectiveDate)})
			}
		}
		for _, t := range sortedTerms(f.Terms.Reserved[sku]) {
			b.awsReserved(inst, region, s, t, seen)
		}
	}
	return nil
}

// awsInstance keeps Linux instances on shared tenancy with no licensed
// software: the price of the machine itself.
func (b *builder) awsInstance(p awsProduct) (string, string, shape, bool) {
	a := p.Attributes
	if p.ProductFamily != "Compute Instance" || a["operatingSystem"] != "Linux" || a["tenancy"] != "Shared" ||
		a["preInstalledSw"] != "NA" || (a["capacitystatus"] != "" && a["capacitystatus"] != "Used") {
		return "", "", shape{}, false
	}
	inst, region := a["instanceType"], a["regionCode"]
	if inst == "" || region == "" {
		b.skip("product %s: no instanceType or regionCode", p.SKU)
		return "", "", shape{}, false
	}
	s, ok := b.shapeOf("aws", inst, awsShapes)
	if !ok {
		if n, _ := strconv.Atoi(a["gpu"]); n > 0 {
			b.skip("aws %s: %d GPUs of a model corral's shapes do not know (give it in a negotiated file or the catalog)", inst, n)
		}
		return "", "", shape{}, false
	}
	return inst, region, s, true
}

// awsReserved adds a reserved instance term: its effective hourly price,
// the hourly fee plus the upfront fee spread over the term's hours.
func (b *builder) awsReserved(inst, region string, s shape, t awsTerm, seen string) {
	a := t.TermAttributes
	years, _ := strconv.Atoi(strings.TrimSuffix(a["LeaseContractLength"], "yr"))
	c, ok := termCapacity(years)
	if !ok {
		return
	}
	usd, ok := t.hourly(hoursOf(years))
	if !ok {
		return
	}
	note := fmt.Sprintf("reserved instance, %s %s %s: $%.4f an hour effective", a["LeaseContractLength"], a["OfferingClass"], a["PurchaseOption"], usd)
	b.add("aws", inst, region, s, c, &price.Quote{USDPerHour: usd, Source: b.source(awsDoc), Seen: seen, Note: note})
}

// hourly is a term's price of an instance-hour: the dimensions in Hrs,
// plus those in Quantity (upfront fees) over termHours. ok is false when
// the term has no USD price or it is zero.
func (t awsTerm) hourly(termHours float64) (float64, bool) {
	total := 0.0
	for _, d := range t.PriceDimensions {
		v, err := strconv.ParseFloat(d.PricePerUnit["USD"], 64)
		if err != nil {
			return 0, false
		}
		switch {
		case d.Unit == "Hrs":
			total += v
		case d.Unit == "Quantity" && termHours > 0:
			total += v / termHours
		}
	}
	return total, total > 0
}

func dateOr(s string) string {
	if d, err := day(s); err == nil {
		return d
	}
	return s
}

func sortedTerms(m map[string]awsTerm) []awsTerm {
	var out []awsTerm
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

package focus

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/corral-sched/corral/internal/cost/alloc"
)

// Meta is what a bill does not say about itself: who issues it, for what
// account, and what its owners are.
type Meta struct {
	Provider    string // ProviderName, PublisherName and InvoiceIssuerName
	AccountID   string // BillingAccountId
	AccountName string // BillingAccountName
	Service     string // ServiceName
	OwnerKind   string // tenant, queue, namespace: a tag on every row
}

// Unit is the pricing and consumed unit of every usage row.
const Unit = "GPU-Hours"

const dateTime = "2006-01-02T15:04:05Z"

// row is one FOCUS row before it is written.
type row struct {
	kind, owner, model, description string
	cost                            alloc.Cents
	consumed                        float64 // GPU-hours measured; negative: no quantity
}

// Write writes b as a FOCUS 1.2 CSV dataset with the claimed columns.
func Write(w io.Writer, b *alloc.Bill, m Meta) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(names()); err != nil {
		return fmt.Errorf("focus: %w", err)
	}
	for _, r := range rows(b, m) {
		if err := cw.Write(record(b, m, r)); err != nil {
			return fmt.Errorf("focus: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("focus: %w", err)
	}
	return nil
}

// rows turns the bill's lines into rows: used, idle and shared parts of
// each line that has one.
func rows(b *alloc.Bill, m Meta) []row {
	var out []row
	for _, l := range b.Lines {
		price := b.Price(l.Model)
		if l.Model != "" && l.Owner != alloc.Idle {
			out = append(out, row{kind: "used", owner: l.Owner, model: l.Model, cost: l.Used, consumed: l.GPUHours,
				description: fmt.Sprintf("%s GPU-hours used by %s %s", l.Model, m.OwnerKind, l.Owner)})
		}
		if l.Idle > 0 {
			d := fmt.Sprintf("idle %s capacity shared to %s %s in proportion to its used cost", l.Model, m.OwnerKind, l.Owner)
			consumed := l.Idle.USD() / price
			if l.Owner == alloc.Idle {
				d = fmt.Sprintf("idle %s capacity: paid for and not used", l.Model)
				consumed = l.GPUHours
			}
			out = append(out, row{kind: "idle", owner: l.Owner, model: l.Model, cost: l.Idle, consumed: consumed, description: d})
		}
		if l.Shared > 0 {
			how := "in proportion to allocated cost"
			if b.Shared == alloc.SharedEven {
				how = "evenly"
			}
			out = append(out, row{kind: "shared", owner: l.Owner, cost: l.Shared, consumed: -1,
				description: fmt.Sprintf("shared cost split %s: the part of %s %s", how, m.OwnerKind, l.Owner)})
		}
	}
	return out
}

// period formats a bill's period at FOCUS's whole seconds, start
// inclusive and end exclusive: the start is cut down to its second and the
// end rounded up to the next, so the written period covers the bill's and
// is never empty, even for a bill shorter than a second.
func period(start, end time.Time) (string, string) {
	s, e := start.UTC().Truncate(time.Second), end.UTC()
	if t := e.Truncate(time.Second); !t.Equal(e) {
		e = t.Add(time.Second)
	}
	if !e.After(s) {
		e = s.Add(time.Second)
	}
	return s.Format(dateTime), e.Format(dateTime)
}

// record writes r in the order of Columns.
func record(b *alloc.Bill, m Meta, r row) []string {
	start, end := period(b.Start, b.End)
	cost := r.cost.String()
	tags, _ := json.Marshal(map[string]string{"corral/owner": r.owner, "corral/owner-kind": m.OwnerKind})
	v := map[string]string{
		"BilledCost": cost, "ContractedCost": cost, "EffectiveCost": cost, "ListCost": cost,
		"BillingAccountId": m.AccountID, "BillingAccountName": m.AccountName, "BillingCurrency": "USD",
		"BillingPeriodStart": start, "BillingPeriodEnd": end, "ChargePeriodStart": start, "ChargePeriodEnd": end,
		"ChargeCategory": "Usage", "ChargeDescription": r.description, "ChargeFrequency": "Usage-Based",
		"InvoiceIssuerName": m.Provider, "ProviderName": m.Provider, "PublisherName": m.Provider,
		"ServiceCategory": "Compute", "ServiceName": m.Service,
		"SubAccountId": r.owner, "SubAccountName": r.owner, "Tags": string(tags), "x_CostKind": r.kind, "x_GPUModel": r.model,
	}
	if r.consumed >= 0 {
		// PricingQuantity is the GPU-hours the row's cents pay for, so that
		// it times the unit price is the cost; ConsumedQuantity is what was
		// measured, which differs from it by less than a cent's worth.
		p := b.Price(r.model)
		price := strconv.FormatFloat(p, 'f', -1, 64)
		q := strconv.FormatFloat(r.consumed, 'f', 6, 64)
		pq := strconv.FormatFloat(r.cost.USD()/p, 'f', 9, 64)
		for k, x := range map[string]string{"ConsumedQuantity": q, "ConsumedUnit": Unit, "PricingQuantity": pq, "PricingUnit": Unit,
			"ListUnitPrice": price, "ContractedUnitPrice": price, "PricingCategory": "Standard",
			"ResourceId": m.AccountID + "/" + r.model, "ResourceName": r.model, "ResourceType": "GPU"} {
			v[k] = x
		}
	} else {
		v["ChargeCategory"] = "Adjustment"
	}
	out := make([]string, len(Columns))
	for i, c := range Columns {
		out[i] = v[c.Name]
	}
	return out
}

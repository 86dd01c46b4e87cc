// Package focus writes a bill (internal/cost/alloc) as a FOCUS dataset and
// checks one: the FinOps Open Cost and Usage Specification, version 1.2
// (https://focus.finops.org/focus-specification/v1-2/), whose column
// definitions are in https://github.com/FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec
// (specification/columns/*.md).
//
// The columns written and checked are listed in Columns (columns.go) with
// their FOCUS type and nullability: the Mandatory columns a scheduler can
// fill (BilledCost, BillingAccountId, BillingAccountName, BillingCurrency,
// BillingPeriodStart/End, ChargeCategory, ChargeClass, ChargeDescription,
// ChargePeriodStart/End, ContractedCost, EffectiveCost, InvoiceIssuerName,
// ListCost, PricingQuantity, PricingUnit, ProviderName, PublisherName,
// ServiceCategory, ServiceName) and the Conditional and Recommended ones it
// has data for (ChargeFrequency, ConsumedQuantity, ConsumedUnit,
// ContractedUnitPrice, ListUnitPrice, PricingCategory, ResourceId,
// ResourceName, ResourceType, SubAccountId, SubAccountName, Tags), plus two
// custom columns, x_CostKind (used, idle, shared) and x_GPUModel. Columns
// FOCUS 1.2 makes Mandatory that are not written (BillingAccountType and
// others a scheduler has no value for) are not claimed, and the checker
// says a file conforms to the claimed columns only.
//
// Every line of the bill becomes up to three rows of one owner (SubAccount)
// and GPU model: the used cost and the idle cost shared to it are Usage
// charges in GPU-hours; its part of the shared cost is an Adjustment with
// no quantity. The __idle__ lines are Usage rows of SubAccount __idle__.
// Costs are the bill's cents, so BilledCost sums to the bill's total.
//
// Periods are written in whole seconds, start inclusive and end exclusive:
// the bill's start cut down to its second, its end rounded up, so that a
// bill shorter than a second still has a period that validates.
//
// Write (write.go) writes a dataset; Validate (validate.go) checks a CSV
// against the claimed columns: presence, types (decimal, ISO 8601 UTC
// datetime, ISO 4217 currency, JSON tags), nullability, allowed values,
// ChargePeriodStart before ChargePeriodEnd, unit price times quantity
// against cost, and the BilledCost sum. Errors name the row and column.
package focus

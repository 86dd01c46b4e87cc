package focus

// Version is the FOCUS version of the columns claimed.
const Version = "1.2"

// Type is a FOCUS data type, as the checker reads it.
type Type int

const (
	String   Type = iota
	Decimal       // NumericFormat: an integer, decimal or scientific value
	DateTime      // DateTimeFormat: ISO 8601 in UTC, YYYY-MM-DDTHH:mm:ssZ
	Currency      // an ISO 4217 alphabetic code
	JSON          // KeyValueFormat: a JSON object
)

// Null says when a column may be empty.
type Null int

const (
	Never              Null = iota // never null
	Allowed                        // may be null
	NotInUsage                     // not null on Usage charges that are not corrections
	NotInUsageOrBought             // not null on Usage and Purchase charges that are not corrections
)

// Column is one column claimed, with its FOCUS 1.2 feature level.
type Column struct {
	Name    string
	Level   string // Mandatory, Conditional, Recommended, custom
	Type    Type
	Null    Null
	Allowed []string // allowed values; none: any
}

// The allowed values of FOCUS 1.2 (chargecategory.md, chargeclass.md,
// chargefrequency.md, pricingcategory.md, servicecategory.md).
var (
	ChargeCategories  = []string{"Adjustment", "Credit", "Purchase", "Tax", "Usage"}
	ChargeClasses     = []string{"Correction"}
	ChargeFrequencies = []string{"One-Time", "Recurring", "Usage-Based"}
	PricingCategories = []string{"Committed", "Dynamic", "Other", "Standard"}
	ServiceCategories = []string{"AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases",
		"Developer Tools", "Multicloud", "Identity", "Integration", "Internet of Things", "Management and Governance", "Media",
		"Migration", "Mobile", "Networking", "Security", "Storage", "Web", "Other"}
)

// Columns are the columns written and checked, in the order written
// (FOCUS's alphabetical order, custom columns last).
var Columns = []Column{
	{Name: "BilledCost", Level: "Mandatory", Type: Decimal},
	{Name: "BillingAccountId", Level: "Mandatory"},
	{Name: "BillingAccountName", Level: "Mandatory", Null: Allowed},
	{Name: "BillingCurrency", Level: "Mandatory", Type: Currency},
	{Name: "BillingPeriodEnd", Level: "Mandatory", Type: DateTime},
	{Name: "BillingPeriodStart", Level: "Mandatory", Type: DateTime},
	{Name: "ChargeCategory", Level: "Mandatory", Allowed: ChargeCategories},
	{Name: "ChargeClass", Level: "Mandatory", Null: Allowed, Allowed: ChargeClasses},
	{Name: "ChargeDescription", Level: "Mandatory", Null: Allowed},
	{Name: "ChargeFrequency", Level: "Recommended", Allowed: ChargeFrequencies},
	{Name: "ChargePeriodEnd", Level: "Mandatory", Type: DateTime},
	{Name: "ChargePeriodStart", Level: "Mandatory", Type: DateTime},
	{Name: "ConsumedQuantity", Level: "Conditional", Type: Decimal, Null: NotInUsage},
	{Name: "ConsumedUnit", Level: "Conditional", Null: NotInUsage},
	{Name: "ContractedCost", Level: "Mandatory", Type: Decimal},
	{Name: "ContractedUnitPrice", Level: "Conditional", Type: Decimal, Null: NotInUsageOrBought},
	{Name: "EffectiveCost", Level: "Mandatory", Type: Decimal},
	{Name: "InvoiceIssuerName", Level: "Mandatory"},
	{Name: "ListCost", Level: "Mandatory", Type: Decimal},
	{Name: "ListUnitPrice", Level: "Conditional", Type: Decimal, Null: NotInUsageOrBought},
	{Name: "PricingCategory", Level: "Conditional", Null: NotInUsageOrBought, Allowed: PricingCategories},
	{Name: "PricingQuantity", Level: "Mandatory", Type: Decimal, Null: NotInUsageOrBought},
	{Name: "PricingUnit", Level: "Mandatory", Null: NotInUsageOrBought},
	{Name: "ProviderName", Level: "Mandatory"},
	{Name: "PublisherName", Level: "Mandatory"},
	{Name: "ResourceId", Level: "Conditional", Null: Allowed},
	{Name: "ResourceName", Level: "Conditional", Null: Allowed},
	{Name: "ResourceType", Level: "Conditional", Null: Allowed},
	{Name: "ServiceCategory", Level: "Mandatory", Allowed: ServiceCategories},
	{Name: "ServiceName", Level: "Mandatory"},
	{Name: "SubAccountId", Level: "Conditional", Null: Allowed},
	{Name: "SubAccountName", Level: "Conditional", Null: Allowed},
	{Name: "Tags", Level: "Conditional", Type: JSON, Null: Allowed},
	{Name: "x_CostKind", Level: "custom", Allowed: []string{"used", "idle", "shared"}},
	{Name: "x_GPUModel", Level: "custom", Null: Allowed},
}

// names are the claimed columns' names in order.
func names() []string {
	out := make([]string, len(Columns))
	for i, c := range Columns {
		out[i] = c.Name
	}
	return out
}

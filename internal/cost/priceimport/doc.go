// Package priceimport turns the providers' own machine-readable price
// files into a corral prices document (internal/cost/price), each figure
// carrying the file it came from and the date of its data:
//
//   - AWS Price List bulk offer files (products and terms OnDemand and
//     Reserved) and Savings Plans rate files (aws.go);
//   - Azure Retail Prices API responses: Items of type Consumption and
//     Reservation, with their savingsPlan rates where given (azure.go);
//   - GCP Cloud Billing Catalog SKUs: GPU SKUs on demand, preemptible
//     (spot) and committed for 1 or 3 years (gcp.go);
//   - a negotiated-rates CSV of one's own agreements (negotiated.go).
//
// Which GPU model and how many GPUs an instance has come from shapes.go,
// or from the catalog given as Options.Base; instances of neither are
// skipped and named. A range of prices (purchase options, payment options)
// resolves to its highest, the conservative end, as catalog.yaml does; the
// others are kept in the quote's note.
//
// Start with Import (import.go). The package performs no I/O: callers read
// the file and write the document Encode returns.
package priceimport

// Package price is corral's catalog of GPU instance prices: on-demand, spot
// and 1- and 3-year commitments for the instance families people rent, each
// mapped to a GPU model of corral's catalog (internal/gpu) and each figure
// carrying the document it came from and the date it was published or read.
//
// The catalog ships as YAML (catalog.yaml, embedded) so that it can be read,
// edited and diffed; Default parses it. A user file in the same format adds
// offers or replaces figures of existing ones (private discounts, a
// negotiated reserved rate): Parse reads it with file:line errors and Merge
// lays it over the default. A figure that is not known is absent, and asking
// for it gives an error wrapping ErrUnknown that names what is missing.
//
// Every figure has a source and the date of its data; an offer lists the
// capacity types it is sold as (sold_as) and a GPU form (SXM, PCIe) that
// keeps boards of one model apart in its key; spot offers carry the
// provider's published interruption band. Catalog.Lines (stale.go) lists
// every figure aged on a given day, marking those older than MaxAge.
//
// Start with Offer.PerGPUHour (offer.go), which turns a quote into a price
// per GPU-hour. parse.go reads and checks documents, merge.go lays one over
// another. The package imports only internal/gpu and YAML and performs no
// I/O: callers read files.
package price

// Package alloc turns accounting records into a bill per team: the cost of
// the GPU-hours each tenant, queue or namespace used, and the cost of the
// capacity that was paid for and stood unused (idle), allocated by a
// stated method.
//
// The method is OpenCost's (https://www.opencost.io/docs/specification,
// and the allocation API's includeIdle, shareIdle and shareSplit options,
// https://www.opencost.io/docs/integrations/api):
//
//   - The cost of the fleet over a period is its capacity (GPUs per model)
//     times the period's hours times the price of a GPU-hour of that model.
//   - A record's allocated cost is its GPUs (a fraction for a MIG slice or a
//     shared GPU) times the hours it ran inside the period times the price.
//   - Idle cost is capacity cost less allocated cost, per GPU model. With
//     IdleSeparate it is its own line, owner "__idle__", as OpenCost shows
//     it; with IdleShare it is shared among the owners that used that model
//     in proportion to their allocated cost on it (OpenCost's shareIdle,
//     per resource). Idle capacity of a model no one used stays __idle__.
//   - Shared cost (an overhead for the period: control plane, storage,
//     support) is split among the owners evenly (SharedEven) or in
//     proportion to their allocated cost, idle included when shared
//     (SharedWeighted, OpenCost's "weighted").
//
// Every amount is whole cents. Each model's capacity cost is rounded to the
// cent once and the parts are divided from it by largest remainder (ties to
// the owner first in name order), so the lines add up to the capacity cost
// plus the shared cost exactly. Usage above a model's capacity, a model
// without a price and a model without capacity are refused, naming the
// model: a missing price never becomes a $0 line.
//
// Allocate (alloc.go) is the entry; split.go divides cents. The package
// performs no I/O.
package alloc

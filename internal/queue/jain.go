package queue

import (
	"slices"
	"strings"
)

// Jain is Jain's fairness index of xs, (Σx)² / (n · Σx²): 1 when all are
// equal, 1/n when one gets everything. Pass each tenant's received /
// entitled ratio (Ratios). It is 1 for no values or all zeros; xs should
// not be negative.
func Jain(xs []float64) float64 {
	var sum, squares float64
	for _, x := range xs {
		sum += x
		squares += x * x
	}
	if squares == 0 {
		return 1
	}
	return sum * sum / (float64(len(xs)) * squares)
}

// Ratios are received[t] / entitled[t] for each tenant t with a positive
// entitlement, in tenant name order. A tenant missing from received got 0.
func Ratios(received, entitled map[string]float64) []float64 {
	tenants := make([]string, 0, len(entitled))
	for t, e := range entitled {
		if e > 0 {
			tenants = append(tenants, t)
		}
	}
	slices.SortFunc(tenants, strings.Compare)
	xs := make([]float64, len(tenants))
	for k, t := range tenants {
		xs[k] = received[t] / entitled[t]
	}
	return xs
}

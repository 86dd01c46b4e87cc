package alloc

import (
	"math"
	"sort"
)

// Cents is an amount of money in whole cents.
type Cents int64

// USD is c in dollars.
func (c Cents) USD() float64 { return float64(c) / 100 }

// String writes c as dollars with two decimals, "-1.05".
func (c Cents) String() string {
	sign, v := "", int64(c)
	if v < 0 {
		sign, v = "-", -v
	}
	return sign + itoa(v/100) + "." + pad2(v%100)
}

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

func pad2(v int64) string { return string([]byte{byte('0' + v/10), byte('0' + v%10)}) }

// toCents rounds dollars to the nearest cent.
func toCents(usd float64) Cents { return Cents(math.Round(usd * 100)) }

// split divides total (zero or more) among weights by largest remainder:
// each part is the floor of its exact share, and the cents left over go
// to the largest remainders, ties to the lower index. The parts add up to
// total. With no positive weight everything is zero and the caller keeps
// total.
func split(total Cents, weights []float64) []Cents {
	parts := make([]Cents, len(weights))
	var sum float64
	for _, w := range weights {
		if w > 0 {
			sum += w
		}
	}
	if sum == 0 || total == 0 {
		return parts
	}
	rem := make([]float64, len(weights))
	left := total
	for i, w := range weights {
		if w <= 0 {
			continue
		}
		exact := float64(total) * w / sum
		parts[i] = Cents(math.Floor(exact))
		rem[i] = exact - float64(parts[i])
		left -= parts[i]
	}
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rem[order[a]] > rem[order[b]] })
	for i := 0; left > 0; i = (i + 1) % len(order) {
		if weights[order[i]] > 0 {
			parts[order[i]]++
			left--
		}
	}
	for i := len(order) - 1; left < 0; i = (i + len(order) - 1) % len(order) { // float error: take back from the smallest remainders
		if parts[order[i]] > 0 {
			parts[order[i]]--
			left++
		}
	}
	return parts
}

package queue

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Milli is one whole GPU in the unit of Amounts: quotas and usage are kept
// in thousandths of a GPU so that MIG slices and shared GPUs count their
// fraction.
const Milli = 1000

// Flavor is a kind of GPU a quota is given in: a GPU model by its catalog
// name (for example "H100-80GB") and a capacity type ("on-demand", "spot",
// "reserved").
type Flavor struct {
	Model    string
	Capacity string
}

func (f Flavor) String() string { return f.Model + "/" + f.Capacity }

// CPU and Memory are the flavors of a queue's CPU and memory quota, in
// milli-cores and MiB: they cap what a queue's running work holds as a GPU
// flavor does, but fair share counts GPUs only.
var (
	CPU    = Flavor{Model: "cpu", Capacity: "milli-cores"}
	Memory = Flavor{Model: "memory", Capacity: "MiB"}
)

// ModelCapacity is the capacity type of a model cap's flavor (ModelCap).
const ModelCapacity = "model-cap"

// ModelCap is the flavor of a cap on one GPU model, in milli-GPUs: the
// GPUs of that model a queue's work holds, charged beside its GPU flavor
// (which counts every model), so that a queue may hold, say, at most 16
// H100s among its 64 GPUs. Fair share does not count it.
func ModelCap(model string) Flavor { return Flavor{Model: model, Capacity: ModelCapacity} }

// IsModelCap reports whether f caps one GPU model (ModelCap).
func (f Flavor) IsModelCap() bool { return f.Capacity == ModelCapacity }

// IsGPU reports whether f is a kind of GPU, not CPU, Memory or a model cap
// (whose GPUs its GPU flavor counts already).
func (f Flavor) IsGPU() bool { return f != CPU && f != Memory && !f.IsModelCap() }

// compareFlavors orders flavors by model, then capacity type.
func compareFlavors(a, b Flavor) int {
	return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.Capacity, b.Capacity))
}

// Amounts are GPU quantities per flavor in milli-GPUs (Milli is one GPU). A
// missing flavor is zero; a nil Amounts is empty. The methods never change
// their receiver or argument, and what they return holds no zero entries.
type Amounts map[Flavor]int64

// GPUs is n whole GPUs of flavor f.
func GPUs(f Flavor, n int64) Amounts { return Amounts{f: n * Milli} }

// Flavors lists the flavors with a non-zero amount, by model then capacity.
func (a Amounts) Flavors() []Flavor {
	fs := make([]Flavor, 0, len(a))
	for f, v := range a {
		if v != 0 {
			fs = append(fs, f)
		}
	}
	slices.SortFunc(fs, compareFlavors)
	return fs
}

// Add is a + b.
func (a Amounts) Add(b Amounts) Amounts { return a.combine(b, 1) }

// Sub is a - b; entries may be negative.
func (a Amounts) Sub(b Amounts) Amounts { return a.combine(b, -1) }

func (a Amounts) combine(b Amounts, sign int64) Amounts {
	out := make(Amounts, len(a)+len(b))
	for f, v := range a {
		out[f] += v
	}
	for f, v := range b {
		out[f] += sign * v
	}
	return out.compact()
}

// Fits reports whether a is at most limit in every flavor.
func (a Amounts) Fits(limit Amounts) bool {
	for f, v := range a {
		if v > limit[f] {
			return false
		}
	}
	return true
}

// IsZero reports whether every entry is zero.
func (a Amounts) IsZero() bool {
	for _, v := range a {
		if v != 0 {
			return false
		}
	}
	return true
}

// Equal reports whether a and b hold the same amounts; zero entries and
// missing ones are equal.
func (a Amounts) Equal(b Amounts) bool {
	return a.Fits(b) && b.Fits(a)
}

// Total is the sum over all flavors.
func (a Amounts) Total() int64 {
	var t int64
	for _, v := range a {
		t += v
	}
	return t
}

// Clone is a copy of a without its zero entries.
func (a Amounts) Clone() Amounts { return a.Add(nil) }

// String lists the non-zero amounts in Flavors order, in GPUs:
// "H100-80GB/on-demand=8 A100-40GB/spot=0.5".
func (a Amounts) String() string {
	var b strings.Builder
	for i, f := range a.Flavors() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%v=%s", f, MilliString(a[f]))
	}
	return b.String()
}

// MilliString writes v milli-GPUs as GPUs without trailing zeros.
func MilliString(v int64) string {
	s := fmt.Sprintf("%.3f", float64(v)/Milli)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// negative reports the first flavor (in Flavors order) with a negative
// amount.
func (a Amounts) negative() (Flavor, bool) {
	fs := make([]Flavor, 0, len(a))
	for f, v := range a {
		if v < 0 {
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		return Flavor{}, false
	}
	return slices.MinFunc(fs, compareFlavors), true
}

func (a Amounts) compact() Amounts {
	for f, v := range a {
		if v == 0 {
			delete(a, f)
		}
	}
	return a
}

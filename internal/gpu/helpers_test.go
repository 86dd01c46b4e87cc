package gpu

import (
	"math/rand"
	"slices"
	"testing"
)

func mustLookup(t testing.TB, name string) *Model {
	t.Helper()
	m, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustParse(t testing.TB, m *Model, s string) Layout {
	t.Helper()
	l, err := ParseLayout(m, s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustProfile(t testing.TB, m *Model, name string) int {
	t.Helper()
	p, err := m.ProfileIndex(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tight is a made-up MIG model whose compute budget binds: 8 memory slices
// but only 3 compute slices, so that Validate, Plan and Capacity can be
// tested where compute, not memory, runs out. No catalog model is like this
// (see TestComputeBudgetNeverBindsInCatalog).
var tight = &Model{
	Name: "TIGHT", MemoryMiB: 8192, MIG: true, MemorySlices: 8, ComputeSlices: 3,
	Profiles: []Profile{
		{Name: "1g.1gb", Compute: 1, Slices: 1, Starts: []int{0, 1, 2, 3, 4, 5, 6, 7}, MemoryMiB: 1024},
		{Name: "2g.2gb", Compute: 2, Slices: 2, Starts: []int{0, 2, 4, 6}, MemoryMiB: 2048},
	},
}

// shifty is a made-up MIG model whose 2g starts overlap (0, 1, ..., 6), so
// that one badly placed idle 2g can block two: Capacity must then consider
// destroying idle instances of the very profile it counts. Every catalog
// profile's starts are multiples of its size, so no catalog model does this.
var shifty = &Model{
	Name: "SHIFTY", MemoryMiB: 8192, MIG: true, MemorySlices: 8, ComputeSlices: 8,
	Profiles: []Profile{
		{Name: "1g.1gb", Compute: 1, Slices: 1, Starts: []int{0, 1, 2, 3, 4, 5, 6, 7}, MemoryMiB: 1024},
		{Name: "2g.2gb", Compute: 2, Slices: 2, Starts: []int{0, 1, 2, 3, 4, 5, 6}, MemoryMiB: 2048},
	},
}

// alignedModels are the catalog's MIG models and tight: every profile's
// starts are multiples of its size.
func alignedModels() []*Model {
	var out []*Model
	for _, m := range Models() {
		if m.MIG {
			out = append(out, m)
		}
	}
	return append(out, tight)
}

// layoutModels are alignedModels and shifty.
func layoutModels() []*Model {
	return append(alignedModels(), shifty)
}

// randomLayout adds random instances to an empty layout of m, each busy or
// idle at random, skipping any that would make it invalid.
func randomLayout(rng *rand.Rand, m *Model) Layout {
	l := Layout{Model: m}
	for range rng.Intn(12) {
		pr := rng.Intn(len(m.Profiles))
		starts := m.Profiles[pr].Starts
		next := l.Clone()
		next.insert(Instance{Profile: pr, Start: starts[rng.Intn(len(starts))], Busy: rng.Intn(2) == 0})
		if next.Validate() == nil {
			l = next
		}
	}
	return l
}

// idleSubsets calls f with l minus each subset of its idle instances, and
// the size of that subset.
func idleSubsets(l Layout, f func(rest Layout, deleted int)) {
	var idle []int
	for i, in := range l.Instances {
		if !in.Busy {
			idle = append(idle, i)
		}
	}
	for set := range 1 << len(idle) {
		rest := l.Clone()
		deleted := 0
		for b := len(idle) - 1; b >= 0; b-- {
			if set&(1<<b) != 0 {
				rest.Instances = slices.Delete(rest.Instances, idle[b], idle[b]+1)
				deleted++
			}
		}
		f(rest, deleted)
	}
}

// bruteCapacity counts by exhaustive search the most tasks of p that l can
// take at once: each on an idle instance of p or on a new instance of p, the
// new ones placed after destroying any set of idle instances, with Validate
// as the only judge of what fits.
func bruteCapacity(l Layout, p int, dynamic bool) int {
	idleP := 0
	for _, in := range l.Instances {
		if in.Profile == p && !in.Busy {
			idleP++
		}
	}
	if !dynamic {
		return idleP
	}
	best := 0
	idleSubsets(l, func(rest Layout, _ int) {
		kept := 0
		for _, in := range rest.Instances {
			if in.Profile == p && !in.Busy {
				kept++
			}
		}
		best = max(best, kept+mostAdded(rest, p, 0))
	})
	return best
}

// mostAdded tries every set of starts of p from Starts[from:] and returns
// the largest number of new instances that leave l valid.
func mostAdded(l Layout, p, from int) int {
	best := 0
	starts := l.Model.Profiles[p].Starts
	for j := from; j < len(starts); j++ {
		next := l.Clone()
		next.insert(Instance{Profile: p, Start: starts[j], Busy: true})
		if next.Validate() == nil {
			best = max(best, 1+mostAdded(next, p, j+1))
		}
	}
	return best
}

// bruteFewestDeletes returns the fewest idle instances to destroy so that a
// new instance of p fits, or -1 if none does.
func bruteFewestDeletes(l Layout, p int) int {
	best := -1
	idleSubsets(l, func(rest Layout, deleted int) {
		if (best < 0 || deleted < best) && mostAdded(rest, p, 0) > 0 {
			best = deleted
		}
	})
	return best
}

// newRand returns the tests' deterministic random source.
func newRand() *rand.Rand {
	return rand.New(rand.NewSource(20240601))
}

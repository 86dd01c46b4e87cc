package gang

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
)

// fastFleets random fleets are each probed after fastSteps random changes,
// with every task size 1..4: fastFleets*fastSteps*4 probes in all.
const (
	fastFleets = 400
	fastSteps  = 16
)

// fastProbe is where a single task of g whole GPUs goes, three ways: the
// indexed fast path, the general search (the path Place takes for a gang,
// with one task), and the documented rule computed from scratch. -1 means
// nowhere.
type fastProbe struct {
	fast, general, rule int
	fastOK              bool
}

// probeSingle asks all three without changing s.
func probeSingle(t *testing.T, s *State, g int, keys [][]int, counts, pos []int) fastProbe {
	t.Helper()
	pl, err := s.compile(gpuJob("probe", 1, g))
	if err != nil {
		t.Fatal(err)
	}
	r := pl.reqs[0]
	pr := fastProbe{fast: -1, general: -1, rule: fastRule(s, g, keys, counts, pos)}
	if n, res := s.fastNode(r); res == fastFound {
		pr.fast, pr.fastOK = n, true
	}
	// The general search of placeSingle for need = 1: capacities over the
	// whole fleet, then the innermost domain that holds the task, which
	// is a node whenever any node holds it.
	lim := pl.lim
	lim.need = 1
	s.fill(r, s.root(), lim, nil)
	if s.bestAt(pl.minDepth) >= 1 {
		at, ok := s.deepest(s.root(), 1, pl.minDepth)
		if !ok || !s.isNode(at) {
			t.Fatalf("general search for one task of %d GPUs found %+v, %v: not a node", g, at, ok)
		}
		pr.general = at.id
	}
	return pr
}

// fastRule is fast.go's promise for whole GPUs, computed from scratch: of
// the open nodes with at least g free GPUs, the one with the fewest, then
// the one in the zone with the fewest free GPUs (over open nodes), then
// block, then rack, then the first in tree order (pos). keys and counts
// are bruteKeys of the fleet.
func fastRule(s *State, g int, keys [][]int, counts, pos []int) int {
	f := s.fleet
	L := len(f.Levels)
	open := func(n int) bool { return f.Nodes[n].Schedulable() && !f.Nodes[n].Spare }
	free := make([]int, len(f.Nodes))
	domFree := make([][]int, L)
	for l := range L {
		domFree[l] = make([]int, counts[l])
	}
	for n := range f.Nodes {
		if open(n) {
			free[n] = s.FreeGPUs(n)
			for l := range L {
				domFree[l][keys[n][l]] += free[n]
			}
		}
	}
	less := func(a, b int) bool {
		if free[a] != free[b] {
			return free[a] < free[b]
		}
		for l := range L {
			if fa, fb := domFree[l][keys[a][l]], domFree[l][keys[b][l]]; fa != fb {
				return fa < fb
			}
		}
		return pos[a] < pos[b]
	}
	best := -1
	for n := range f.Nodes {
		if open(n) && free[n] >= g && (best < 0 || less(n, best)) {
			best = n
		}
	}
	return best
}

// fastDescribe prints the fleet in tree order with free GPUs and the free
// GPUs of every domain, for a failure message.
func fastDescribe(s *State, g int, pr fastProbe) string {
	var b strings.Builder
	f := s.fleet
	fmt.Fprintf(&b, "  one task of %d GPUs on levels %v:\n", g, f.Levels)
	for _, n := range s.tree.order {
		node := &f.Nodes[n]
		var dom []string
		for l := range f.Levels {
			v := s.tree.path[n][l]
			dom = append(dom, fmt.Sprintf("%s(free %d)", node.Domains[l], s.index.free[s.index.vc(v, s.nodes[n].class)]))
		}
		state := ""
		if !node.Schedulable() || node.Spare {
			state = fmt.Sprintf(" health %q spare %v", node.Health, node.Spare)
		}
		fmt.Fprintf(&b, "    %s %s free %d of %d%s\n", node.Name, strings.Join(dom, "/"), s.FreeGPUs(n), node.GPUs, state)
	}
	name := func(n int) string {
		if n < 0 {
			return "none"
		}
		return f.Nodes[n].Name
	}
	fmt.Fprintf(&b, "  fast path %s (ok %v), general search %s, documented rule %s\n",
		name(pr.fast), pr.fastOK, name(pr.general), name(pr.rule))
	return b.String()
}

// TestFastPathMatchesSearch checks the promise of fast.go: for a single
// task of whole GPUs without constraints, the indexed fast path picks the
// node the general search picks. Fleets are drawn like the exhaustive
// tests' (up to 40 nodes, some cordoned or hot spares), then changed step
// by step by placing and releasing 1-4 GPU jobs; after every step a task
// of each size 1..4 is probed. Both choices are also compared with the
// documented rule (fastRule). Place, which now packs single tasks with
// corral's policy (pack.go), must find a node exactly when the search does,
// land on an open node with room, and leave the state as it was after
// Release.
func TestFastPathMatchesSearch(t *testing.T) {
	var fails bruteFailures
	probes, none := 0, 0
	for i := range fastFleets {
		rng := bruteRand(3, i)
		f := bruteFleet(rng, 40)
		for n := range f.Nodes {
			switch rng.IntN(16) {
			case 0:
				f.Nodes[n].Health = fleet.Cordoned
			case 1:
				f.Nodes[n].Spare = true
			}
		}
		s := newState(t, f)
		keys, counts := bruteKeys(f)
		pos := make([]int, len(f.Nodes))
		for p, n := range f.Sorted() {
			pos[n] = p
		}
		var placed []string
		for step := range fastSteps {
			if len(placed) > 0 && rng.IntN(2) == 0 {
				k := rng.IntN(len(placed))
				if err := s.Release(placed[k]); err != nil {
					t.Fatal(err)
				}
				placed = slices.Delete(placed, k, k+1)
			} else {
				for range 1 + rng.IntN(3) {
					name := fmt.Sprintf("fill-%d-%d", step, len(placed))
					if _, u := s.Place(gpuJob(name, 1, 1+rng.IntN(4))); u == nil {
						placed = append(placed, name)
					}
				}
			}
			for g := 1; g <= 4; g++ {
				probes++
				pr := probeSingle(t, s, g, keys, counts, pos)
				where := func() string { return fmt.Sprintf("  fleet %d step %d\n%s", i, step, fastDescribe(s, g, pr)) }
				switch {
				case pr.fast != pr.general:
					fails.add("fast path and general search pick different nodes", where())
				case pr.general != pr.rule:
					fails.add("general search breaks the documented rule", where())
				}
				if pr.general < 0 {
					none++
				}
				before := bruteSnapshot(s)
				p, u := s.Place(gpuJob("probe", 1, g))
				switch {
				case u != nil && pr.general >= 0:
					fails.add("Place finds no node although the search does", where()+"  "+u.Error()+"\n")
				case u == nil && pr.general < 0:
					fails.add("Place finds a node although the search does not", where())
				}
				if u == nil {
					if err := s.Release("probe"); err != nil {
						t.Fatal(err)
					}
					if n := p.Tasks[0].Node; s.FreeGPUs(n) < g || !s.open(n) {
						fails.add("Place lands on a node that cannot take the task", where()+"  Place: "+p.Tasks[0].NodeName+"\n")
					}
				}
				if d := before.diff(bruteSnapshot(s)); d != "" {
					fails.add("Place and Release of a probe change the state", where()+"  "+d+"\n")
				}
				if d := bruteIndexDiff(s); d != "" {
					fails.add("index inconsistent", where()+"  "+d+"\n")
				}
			}
		}
	}
	t.Logf("%d probes on %d fleets, %d with no node for the task", probes, fastFleets, none)
	fails.report(t, probes)
}

// TestFastPathBreaksTiesLikeSearch is the smallest case the random test
// finds: blocks b0 and b1 have 2 free GPUs each, so the general search
// looks one level in and prefers b1's racks (1 free GPU each) over b0's
// rack (2 free); the fast path takes the first of two equal blocks.
//
//	b0/r0: a (1 GPU, free), b (1 GPU, free)
//	b1/r0: c (1 GPU, free)
//	b1/r1: d (1 GPU, free)
func TestFastPathBreaksTiesLikeSearch(t *testing.T) {
	node := func(name string, dom ...string) fleet.Node {
		return fleet.Node{Name: name, Domains: dom, CPUMilli: 64000, MemoryMiB: 1 << 20, GPUModel: "H100", GPUs: 1}
	}
	f := &fleet.Fleet{Levels: []string{"block", "rack"}, Nodes: []fleet.Node{
		node("a", "b0", "r0"), node("b", "b0", "r0"), node("c", "b1", "r0"), node("d", "b1", "r1"),
	}}
	s := newState(t, f)
	keys, counts := bruteKeys(f)
	pr := probeSingle(t, s, 1, keys, counts, []int{0, 1, 2, 3})
	if pr.general != 2 || pr.rule != 2 {
		t.Fatalf("general search %d, rule %d: want node c (2)\n%s", pr.general, pr.rule, fastDescribe(s, 1, pr))
	}
	desc := fastDescribe(s, 1, pr)
	p, u := s.Place(gpuJob("one", 1, 1))
	if u != nil {
		t.Fatal(u)
	}
	if got := p.Tasks[0].NodeName; got != "c" {
		t.Errorf("a 1-GPU task went to node %s; the general search picks c\n%s", got, desc)
	}
}

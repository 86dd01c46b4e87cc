package gang

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// The tests in this file check Place against an exhaustive reference on
// small random fleets: gangs of one task shape (TestPlaceMatchesExhaustive
// Search) and a CPU-only launcher with a worker group (TestPlaceLauncher
// AndWorkers, TestPlaceElasticShrinksPastLastGroup). Every case is drawn
// from its own PCG stream (bruteSeed ^ test, case number), so a failing
// case is rebuilt from its number alone; failures are collected by kind
// and each kind is reported once, with a count and its first case.

const bruteSeed = 0x636f7272616c // "corral"

// bruteCases is the number of single-shape gangs checked (about 4.5 s with
// -race on 2 cores); bruteMultiCases the number of launcher+worker gangs
// (about 1 s). -short runs a tenth of each.
const (
	bruteCases      = 12000
	bruteMultiCases = 2000
	bruteMaxNodes   = 12 // keeps the enumeration small
)

// bruteScale is n cases, or a tenth of them with -short.
func bruteScale(n int) int {
	if testing.Short() {
		return n / 10
	}
	return n
}

// bruteRand is the random stream of case i of a test.
func bruteRand(test uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(bruteSeed^test, uint64(i)))
}

// bruteFleet draws a small fleet: levels [block rack] mostly, sometimes
// [zone block rack], [rack] or none; 1-3 domains per parent, 1-3 nodes per
// rack (1-5 without levels), every node an H100 node with 1-8 GPUs. Node
// order is sometimes shuffled so that domains are not contiguous in the
// fleet's node list. Fleets over maxNodes nodes are drawn again.
func bruteFleet(rng *rand.Rand, maxNodes int) *fleet.Fleet {
	var levels []string
	switch p := rng.IntN(20); {
	case p < 12:
		levels = []string{"block", "rack"}
	case p < 15:
		levels = []string{"zone", "block", "rack"}
	case p < 18:
		levels = []string{"rack"}
	}
	for {
		f := &fleet.Fleet{Levels: levels}
		var walk func(path []string)
		walk = func(path []string) {
			if len(path) == len(levels) {
				n := 1 + rng.IntN(3)
				if len(levels) == 0 {
					n = 1 + rng.IntN(5)
				}
				for range n {
					f.Nodes = append(f.Nodes, fleet.Node{
						Name:     fmt.Sprintf("n%02d", len(f.Nodes)),
						Domains:  slices.Clone(path),
						CPUMilli: 128000, MemoryMiB: 1 << 20,
						GPUModel: "H100", GPUs: 1 + rng.IntN(8),
					})
				}
				return
			}
			for i := range 1 + rng.IntN(3) {
				walk(append(slices.Clone(path), fmt.Sprintf("%s%d", levels[len(path)][:1], i)))
			}
		}
		walk(nil)
		if len(f.Nodes) > maxNodes {
			continue
		}
		if rng.IntN(4) == 0 {
			rng.Shuffle(len(f.Nodes), func(i, j int) { f.Nodes[i], f.Nodes[j] = f.Nodes[j], f.Nodes[i] })
		}
		return f
	}
}

// bruteOccupy scatters free GPUs: it places single-task jobs of 1-4 GPUs
// (names fill-*) through Place, then releases about a third of them.
func bruteOccupy(t testing.TB, rng *rand.Rand, s *State) {
	t.Helper()
	attempts := rng.IntN(s.fleet.GPUs()/2 + 2)
	var placed []string
	for i := range attempts {
		name := fmt.Sprintf("fill-%d", i)
		if _, u := s.Place(gpuJob(name, 1, 1+rng.IntN(4))); u == nil {
			placed = append(placed, name)
		}
	}
	for _, name := range placed {
		if rng.IntN(3) == 0 {
			if err := s.Release(name); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// bruteKeys numbers the domains of f from the nodes' domain paths alone
// (not from the state's tree): keys[n][l] is node n's domain at level l,
// and keys[n][len(levels)] is n itself. counts[l] is the number of
// domains at level l.
func bruteKeys(f *fleet.Fleet) (keys [][]int, counts []int) {
	L := len(f.Levels)
	ids := make([]map[string]int, L)
	for l := range ids {
		ids[l] = map[string]int{}
	}
	keys = make([][]int, len(f.Nodes))
	for n := range f.Nodes {
		keys[n] = make([]int, L+1)
		for l := range L {
			p := strings.Join(f.Nodes[n].Domains[:l+1], "/")
			id, ok := ids[l][p]
			if !ok {
				id = len(ids[l])
				ids[l][p] = id
			}
			keys[n][l] = id
		}
		keys[n][L] = n
	}
	counts = make([]int, L+1)
	for l := range L {
		counts[l] = len(ids[l])
	}
	counts[L] = len(f.Nodes)
	return keys, counts
}

// bruteSpec is a gang of one task shape as the reference sees it.
type bruteSpec struct {
	tasks, min int // the job's count and its minimum
	gpus       int
	pack       int // required pack depth (len(levels) = node), -1 for none
	spread     int // spread depth, -1 for none
	spreadMax  int
}

// bruteRef is what the exhaustive search finds.
type bruteRef struct {
	best  int   // the most tasks placeable, <= spec.tasks
	span  []int // for best: the fewest domains per level, then nodes, each minimised on its own
	lex   []int // for best: the lexicographically least span (outermost level first)
	count int   // assignments enumerated
}

func (r bruteRef) fits(sp bruteSpec) bool { return r.best >= sp.min }

// bruteReference enumerates every assignment of task counts to nodes: a
// node holds at most free/gpus tasks, all tasks lie in one domain of the
// pack level, no spread domain holds more than spreadMax, and no more
// than spec.tasks tasks in all.
func bruteReference(free []int, keys [][]int, counts []int, sp bruteSpec) bruteRef {
	L := len(counts) - 1
	T := sp.tasks
	feasible := make([]bool, T+1)
	minSpan, minLex := make([][]int, T+1), make([][]int, T+1)
	for t := range minSpan {
		minSpan[t] = slices.Repeat([]int{1 << 30}, L+1)
		minLex[t] = slices.Repeat([]int{1 << 30}, L+1)
	}
	// Pack groups: each is the set of nodes of one pack domain that hold
	// at least one task.
	groups := map[int][]int{}
	for n := range free {
		if free[n]/sp.gpus == 0 {
			continue
		}
		k := 0
		if sp.pack >= 0 {
			k = keys[n][sp.pack]
		}
		groups[k] = append(groups[k], n)
	}
	cnt := make([][]int, L+1) // nodes with a task, per domain
	for l := range cnt {
		cnt[l] = make([]int, counts[l])
	}
	var use []int // tasks per spread domain
	if sp.spread >= 0 {
		use = make([]int, counts[sp.spread])
	}
	spanNow := make([]int, L+1)
	var ref bruteRef
	var nodes []int
	var dfs func(i, total int)
	dfs = func(i, total int) {
		if i == len(nodes) {
			ref.count++
			feasible[total] = true
			for l, v := range spanNow {
				minSpan[total][l] = min(minSpan[total][l], v)
			}
			if slices.Compare(spanNow, minLex[total]) < 0 {
				copy(minLex[total], spanNow)
			}
			return
		}
		n := nodes[i]
		lim := min(free[n]/sp.gpus, T-total)
		if sp.spread >= 0 {
			lim = min(lim, sp.spreadMax-use[keys[n][sp.spread]])
		}
		dfs(i+1, total)
		if lim <= 0 {
			return
		}
		for l, k := range keys[n] {
			if cnt[l][k] == 0 {
				spanNow[l]++
			}
			cnt[l][k]++
		}
		for x := 1; x <= lim; x++ {
			if sp.spread >= 0 {
				use[keys[n][sp.spread]]++
			}
			dfs(i+1, total+x)
		}
		if sp.spread >= 0 {
			use[keys[n][sp.spread]] -= lim
		}
		for l, k := range keys[n] {
			cnt[l][k]--
			if cnt[l][k] == 0 {
				spanNow[l]--
			}
		}
	}
	for _, g := range groups {
		nodes = g
		dfs(0, 0)
	}
	for t := T; t >= 0; t-- {
		if feasible[t] {
			ref.best = t
			ref.span, ref.lex = minSpan[t], minLex[t]
			break
		}
	}
	return ref
}

// bruteSnap is what a failed placement must leave unchanged.
type bruteSnap struct {
	free     [][]bool
	cpu, mem []int64
	jobs     int
}

func bruteSnapshot(s *State) bruteSnap {
	var sn bruteSnap
	for n := range s.nodes {
		g := make([]bool, len(s.nodes[n].whole))
		for i := range g {
			g[i] = s.freeWhole(n, i)
		}
		sn.free = append(sn.free, g)
		sn.cpu = append(sn.cpu, s.left.CPULeft[n])
		sn.mem = append(sn.mem, s.left.MemLeft[n])
	}
	sn.jobs = len(s.jobs)
	return sn
}

func (a bruteSnap) diff(b bruteSnap) string {
	for n := range a.free {
		if !slices.Equal(a.free[n], b.free[n]) || a.cpu[n] != b.cpu[n] || a.mem[n] != b.mem[n] {
			return fmt.Sprintf("node %d: free %v cpu %d mem %d, then free %v cpu %d mem %d",
				n, a.free[n], a.cpu[n], a.mem[n], b.free[n], b.cpu[n], b.mem[n])
		}
	}
	if a.jobs != b.jobs {
		return fmt.Sprintf("%d jobs, then %d", a.jobs, b.jobs)
	}
	return ""
}

// bruteIndexDiff recomputes every node summary and the free-GPU index from
// scratch and says where the state's copy differs.
func bruteIndexDiff(s *State) string {
	ix := &s.index
	free := make([]int32, len(ix.free))
	hist := make([]int32, len(ix.hist))
	for n := range s.nodes {
		sum := s.summarise(n)
		if sum != s.nodes[n].sum {
			return fmt.Sprintf("node %d: summary %+v, recomputed %+v", n, s.nodes[n].sum, sum)
		}
		if !sum.open {
			continue
		}
		for _, v := range append([]int{0}, s.tree.path[n]...) {
			vc := ix.vc(v, s.nodes[n].class)
			free[vc] += int32(sum.free)
			hist[vc*(ix.maxGPUs+1)+sum.free]++
		}
	}
	if !slices.Equal(free, ix.free) || !slices.Equal(hist, ix.hist) {
		return fmt.Sprintf("index free %v hist %v, recomputed free %v hist %v", ix.free, ix.hist, free, hist)
	}
	return ""
}

// bruteFailures collects violations by kind, so that one run shows every
// kind of failure with its first example and a count.
type bruteFailures struct {
	order []string
	count map[string]int
	first map[string]string
}

func (b *bruteFailures) add(kind, example string) {
	if b.count == nil {
		b.count, b.first = map[string]int{}, map[string]string{}
	}
	if b.count[kind] == 0 {
		b.order = append(b.order, kind)
		b.first[kind] = example
	}
	b.count[kind]++
}

func (b *bruteFailures) report(t *testing.T, cases int) {
	t.Helper()
	for _, kind := range b.order {
		t.Errorf("%s: %d of %d cases; first:\n%s", kind, b.count[kind], cases, b.first[kind])
	}
}

// bruteDescribe prints a case so that it can be rebuilt by hand: the
// fleet's nodes in tree order with their free GPUs, and the job.
func bruteDescribe(i int, s *State, free []int, j *job.Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  case %d, levels %v\n", i, s.fleet.Levels)
	for _, n := range s.tree.order {
		node := &s.fleet.Nodes[n]
		fmt.Fprintf(&b, "    %s %-8s gpus %d free %d\n", node.Name, node.Path(), node.GPUs, free[n])
	}
	fmt.Fprintf(&b, "  job: min %d elastic %v, topology %+v\n", j.MinMember, j.Elastic, j.Topology)
	for _, g := range j.Groups {
		fmt.Fprintf(&b, "    group %s: %d x {gpus %d cpu %dm}\n", g.Name, g.Count, g.Task.GPUs, g.Task.CPUMilli)
	}
	return b.String()
}

// bruteGang draws the gang under test: T tasks (1-6) of g GPUs (1-4), an
// optional required pack at any level, an optional required spread at
// node or rack (never the pack's level), sometimes a minimum below T.
func bruteGang(rng *rand.Rand, f *fleet.Fleet, name string) (*job.Job, bruteSpec) {
	L := len(f.Levels)
	T, g := 1+rng.IntN(6), 1+rng.IntN(4)
	sp := bruteSpec{tasks: T, min: T, gpus: g, pack: -1, spread: -1}
	j := &job.Job{Name: name, Groups: []job.Group{{Name: "w", Count: T,
		Task: job.Demand{GPUs: g, CPUMilli: 100, MemoryMiB: 64}}}}
	if rng.IntN(2) == 0 {
		sp.pack = rng.IntN(L + 1)
		j.Topology = append(j.Topology, job.Constraint{Level: bruteLevel(f, sp.pack), Required: true})
	}
	if rng.IntN(3) == 0 {
		var depths []int
		for _, d := range []int{L, slices.Index(f.Levels, "rack")} {
			if d >= 0 && d != sp.pack {
				depths = append(depths, d)
			}
		}
		if len(depths) > 0 {
			sp.spread, sp.spreadMax = depths[rng.IntN(len(depths))], 1+rng.IntN(2)
			j.Topology = append(j.Topology, job.Constraint{Level: bruteLevel(f, sp.spread), Required: true,
				Spread: true, MaxPerDomain: sp.spreadMax})
		}
	}
	rng.Shuffle(len(j.Topology), func(a, b int) { j.Topology[a], j.Topology[b] = j.Topology[b], j.Topology[a] })
	if rng.IntN(3) == 0 {
		sp.min = 1 + rng.IntN(T)
		j.MinMember, j.Elastic = sp.min, true
	}
	return j, sp
}

func bruteLevel(f *fleet.Fleet, d int) string {
	if d == len(f.Levels) {
		return fleet.NodeLevel
	}
	return f.Levels[d]
}

// bruteCheckTasks checks what every placement must satisfy: tasks of the
// expected group and size on whole GPUs that were free before, no GPU
// given twice, required pack and spread hold over the given tasks.
func bruteCheckTasks(s *State, before bruteSnap, keys [][]int, tasks []Task, group, gpus int, sp bruteSpec) string {
	taken := map[[2]int]bool{}
	perSpread := map[int]int{}
	packKey := -1
	for _, tk := range tasks {
		if tk.Group != group {
			continue
		}
		switch {
		case tk.Node < 0 || tk.Node >= len(s.nodes) || tk.NodeName != s.fleet.Nodes[tk.Node].Name:
			return fmt.Sprintf("task on node %d named %q", tk.Node, tk.NodeName)
		case len(tk.GPUs) != gpus:
			return fmt.Sprintf("task on %s has GPUs %v, want %d", tk.NodeName, tk.GPUs, gpus)
		}
		for _, g := range tk.GPUs {
			if g < 0 || g >= len(before.free[tk.Node]) || !before.free[tk.Node][g] || taken[[2]int{tk.Node, g}] {
				return fmt.Sprintf("task on %s has GPUs %v: GPU %d was not free or is given twice", tk.NodeName, tk.GPUs, g)
			}
			taken[[2]int{tk.Node, g}] = true
		}
		if sp.pack >= 0 {
			k := keys[tk.Node][sp.pack]
			if packKey >= 0 && k != packKey {
				return fmt.Sprintf("required pack at depth %d broken: tasks in domains %d and %d", sp.pack, packKey, k)
			}
			packKey = k
		}
		if sp.spread >= 0 {
			k := keys[tk.Node][sp.spread]
			if perSpread[k]++; perSpread[k] > sp.spreadMax {
				return fmt.Sprintf("spread at depth %d broken: %d tasks in one domain (node %s), max %d", sp.spread, perSpread[k], tk.NodeName, sp.spreadMax)
			}
		}
	}
	return ""
}

// bruteSpan counts the distinct domains per level, then nodes, of tasks.
func bruteSpan(keys [][]int, L int, tasks []Task) []int {
	seen := make([]map[int]bool, L+1)
	for l := range seen {
		seen[l] = map[int]bool{}
	}
	for _, tk := range tasks {
		for l := range L + 1 {
			seen[l][keys[tk.Node][l]] = true
		}
	}
	out := make([]int, L+1)
	for l := range out {
		out[l] = len(seen[l])
	}
	return out
}

// TestBruteReference checks the reference itself on a fleet small enough
// to count by hand: block b0 has racks r0 (a: 2 free GPUs), r1 (b: 1),
// r2 (c: 1); block b1 has rack r0 (d: 3).
func TestBruteReference(t *testing.T) {
	f := &fleet.Fleet{Levels: []string{"block", "rack"}}
	for _, n := range []struct {
		name, block, rack string
		gpus              int
	}{{"a", "b0", "r0", 2}, {"b", "b0", "r1", 1}, {"c", "b0", "r2", 1}, {"d", "b1", "r0", 3}} {
		f.Nodes = append(f.Nodes, fleet.Node{Name: n.name, Domains: []string{n.block, n.rack}, GPUModel: "H100", GPUs: n.gpus})
	}
	keys, counts := bruteKeys(f)
	free := []int{2, 1, 1, 3}
	for _, c := range []struct {
		sp        bruteSpec
		best      int
		span, lex []int
	}{
		// Five tasks: d and a, two blocks, two racks, two nodes.
		{bruteSpec{tasks: 5, min: 5, gpus: 1, pack: -1, spread: -1}, 5, []int{2, 2, 2}, []int{2, 2, 2}},
		// Packed in one block: b0 holds 4 on three nodes; b1 holds 3 on
		// one, but the most tasks come first.
		{bruteSpec{tasks: 5, min: 1, gpus: 1, pack: 0, spread: -1}, 4, []int{1, 3, 3}, []int{1, 3, 3}},
		// At most one per rack: four racks.
		{bruteSpec{tasks: 6, min: 1, gpus: 1, pack: -1, spread: 1, spreadMax: 1}, 4, []int{2, 4, 4}, []int{2, 4, 4}},
		// Two GPUs a task: a and d hold one each.
		{bruteSpec{tasks: 3, min: 3, gpus: 2, pack: -1, spread: -1}, 2, []int{2, 2, 2}, []int{2, 2, 2}},
		// Three tasks fit in d alone, or in b0's three nodes.
		{bruteSpec{tasks: 3, min: 3, gpus: 1, pack: -1, spread: -1}, 3, []int{1, 1, 1}, []int{1, 1, 1}},
		// Four tasks: one block needs three nodes (b0), two blocks need
		// two (d and a): the minima come from different placements.
		{bruteSpec{tasks: 4, min: 4, gpus: 1, pack: -1, spread: -1}, 4, []int{1, 2, 2}, []int{1, 3, 3}},
	} {
		ref := bruteReference(free, keys, counts, c.sp)
		if ref.best != c.best || !slices.Equal(ref.span, c.span) || !slices.Equal(ref.lex, c.lex) {
			t.Errorf("%+v: best %d span %v lex %v, want %d %v %v", c.sp, ref.best, ref.span, ref.lex, c.best, c.span, c.lex)
		}
	}
}

// TestPlaceMatchesExhaustiveSearch checks Place for one task shape against
// bruteReference on random small fleets with scattered free GPUs:
//   - Place places the job iff some assignment holds at least its minimum,
//     and then exactly the most tasks any assignment holds;
//   - every task has exactly g distinct GPUs that were free; required
//     pack and spread hold; Placement.Span counts what the tasks span;
//   - a job that does not fit changes nothing, and Release of a placed
//     one restores the state exactly; the index stays consistent;
//   - at every level down to the innermost one where the reference needs
//     one domain, corral uses one domain ("tightest domain that holds
//     them"); below it, the span excess over the reference's independent
//     minimum is measured and bounded (see bruteMaxExcess).
func TestPlaceMatchesExhaustiveSearch(t *testing.T) {
	var fails bruteFailures
	stats := bruteStats{}
	placed, enumerated, lexWorse, lexExample := 0, 0, 0, ""
	mix := map[string]int{}
	cases := bruteScale(bruteCases)
	for i := range cases {
		rng := bruteRand(1, i)
		f := bruteFleet(rng, bruteMaxNodes)
		s := newState(t, f)
		bruteOccupy(t, rng, s)
		keys, counts := bruteKeys(f)
		L := len(f.Levels)
		j, sp := bruteGang(rng, f, "gang")
		free := make([]int, len(f.Nodes))
		for n := range free {
			free[n] = s.FreeGPUs(n)
		}
		ref := bruteReference(free, keys, counts, sp)
		enumerated += ref.count
		mix[fmt.Sprintf("levels %v", f.Levels)]++
		if sp.pack >= 0 {
			mix["pack"]++
		}
		if sp.spread >= 0 {
			mix["spread"]++
		}
		if sp.min < sp.tasks {
			mix["minimum below count"]++
		}
		if ref.fits(sp) {
			mix["fit by the reference"]++
		}
		desc := func() string { return bruteDescribe(i, s, free, j) }
		before := bruteSnapshot(s)
		p, u := s.Place(j)
		if !ref.fits(sp) {
			if u == nil {
				fails.add("placed although no assignment holds the minimum",
					fmt.Sprintf("%s  reference: at most %d tasks; corral placed %d on %v span %v\n",
						desc(), ref.best, len(p.Tasks), nodesOf(p), p.Span))
				continue
			}
			if d := before.diff(bruteSnapshot(s)); d != "" {
				fails.add("a job that does not fit changed the state", desc()+"  "+d)
			}
			if d := bruteIndexDiff(s); d != "" {
				fails.add("index inconsistent after a failed placement", desc()+"  "+d)
			}
			if len(u.Lines()) == 0 || u.Job != j.Name {
				fails.add("Unfit without reasons", desc())
			}
			continue
		}
		if u != nil {
			fails.add("not placed although an assignment exists",
				fmt.Sprintf("%s  reference: %d tasks, span %v; corral: %v\n", desc(), ref.best, ref.span, u))
			continue
		}
		placed++
		valid := true
		if msg := bruteCheckTasks(s, before, keys, p.Tasks, 0, sp.gpus, sp); msg != "" {
			valid = false
			fails.add("placement breaks a constraint or takes a busy GPU",
				fmt.Sprintf("%s  corral placed %d on %v span %v: %s\n", desc(), len(p.Tasks), nodesOf(p), p.Span, msg))
		}
		if len(p.Tasks) != ref.best {
			fails.add("placed task count is not the most that fit",
				fmt.Sprintf("%s  reference: %d tasks; corral: %d on %v\n", desc(), ref.best, len(p.Tasks), nodesOf(p)))
		}
		span := bruteSpan(keys, L, p.Tasks)
		if !slices.Equal(span, p.Span) {
			fails.add("Placement.Span is not what the tasks span", fmt.Sprintf("%s  Span %v, tasks span %v\n", desc(), p.Span, span))
		}
		if s.Job(j.Name) != p {
			fails.add("Job does not return the placement", desc())
		}
		if valid && len(p.Tasks) == ref.best {
			got := fmt.Sprintf("%s  reference span %v (lexicographic least %v), corral %v on %v\n",
				desc(), ref.span, ref.lex, span, nodesOf(p))
			for _, msg := range bruteCheckSpan(span, ref) {
				fails.add(msg, got)
			}
			inner := bruteInner(ref)
			for l := range L + 1 {
				stats.add(bruteLevel(f, l), span[l]-ref.span[l], got)
				if l > inner {
					stats.add(fmt.Sprintf("inner+%d", l-inner), span[l]-ref.span[l], got)
				}
			}
			if c := slices.Compare(span, ref.lex); c > 0 {
				lexWorse++
				if lexExample == "" {
					lexExample = got
				}
			}
		}
		if err := s.Release(j.Name); err != nil {
			t.Fatal(err)
		}
		if d := before.diff(bruteSnapshot(s)); d != "" {
			fails.add("Release does not restore the state", desc()+"  "+d)
		}
		if d := bruteIndexDiff(s); d != "" {
			fails.add("index inconsistent after Release", desc()+"  "+d)
		}
	}
	t.Logf("%d cases, %d placed, %d assignments enumerated; mix %v", cases, placed, enumerated, mix)
	stats.log(t, "zone", "block", "rack", "node", "inner+1", "inner+2", "inner+3", "inner+4")
	t.Logf("corral's span is lexicographically worse than the least one (outermost level first) in %d of %d placements", lexWorse, placed)
	if testing.Verbose() && lexExample != "" {
		t.Logf("first such placement:\n%s", lexExample)
	}
	fails.report(t, cases)
}

// bruteInner is the innermost level (len(levels) for the node) at which
// the reference fits the gang in one domain, -1 if none.
func bruteInner(ref bruteRef) int {
	inner := -1
	for l, v := range ref.span {
		if v == 1 {
			inner = l
		}
	}
	return inner
}

// bruteCheckSpan compares corral's span with the reference's minima, level
// by level (each minimised on its own over all placements of ref.best
// tasks), and returns what is wrong.
//
// Down to the innermost level where one domain holds the gang, corral must
// use one domain: the package promises "the tightest domain that holds
// them". Below that level corral can exceed the minima, for two reasons:
//
//   - The minima are independent: the fewest racks and the fewest nodes may
//     need different placements (one rack of three 2-task nodes, or two
//     racks with a 4-task node each), so even the best single placement
//     exceeds one of them.
//   - The search is greedy: inside the chosen domain it takes the child
//     domain with the most room first, and among domains that hold the gang
//     it takes the tightest (fewest free GPUs), not the one that needs the
//     fewest children. Taking the largest child can scatter that child's
//     share over more racks and nodes than another child would need.
//
// On these fleets (at most 12 nodes, 3 per rack, 6 tasks) the excess seen
// over 30,000 cases (seed streams 0..29999) is at most 1 on the level just inside the innermost
// single domain and at most 2 on any level; bruteMaxExcess and
// bruteMaxExcessFirst hold it there, so that a search change that spreads
// gangs wider fails here.
func bruteCheckSpan(span []int, ref bruteRef) []string {
	var out []string
	inner := bruteInner(ref)
	for l := range span {
		e := span[l] - ref.span[l]
		switch {
		case e < 0:
			out = append(out, fmt.Sprintf("corral spans fewer domains at depth %d than the exhaustive minimum (reference or constraint broken)", l))
		case l <= inner && span[l] != 1:
			out = append(out, fmt.Sprintf("a gang that fits in one domain of depth %d spans %d of depth %d", inner, span[l], l))
		case l == inner+1 && e > bruteMaxExcessFirst:
			out = append(out, fmt.Sprintf("span excess over %d just inside the innermost single domain", bruteMaxExcessFirst))
		case e > bruteMaxExcess:
			out = append(out, fmt.Sprintf("span excess over %d at depth %d", bruteMaxExcess, l))
		}
	}
	return out
}

// Bounds on corral's span over the exhaustive minima; see bruteCheckSpan.
const (
	bruteMaxExcessFirst = 1
	bruteMaxExcess      = 2
)

// bruteExcess is corral's span minus the reference's at one level.
type bruteExcess struct {
	cases, over, max, sum int
	worst                 string
}

type bruteStats map[string]*bruteExcess

func (st bruteStats) add(key string, e int, example string) {
	x := st[key]
	if x == nil {
		x = &bruteExcess{}
		st[key] = x
	}
	x.cases++
	x.sum += e
	if e > 0 {
		x.over++
	}
	if e > x.max {
		x.max, x.worst = e, example
	}
}

func (st bruteStats) log(t *testing.T, keys ...string) {
	for _, key := range keys {
		x := st[key]
		if x == nil {
			continue
		}
		t.Logf("span excess at %-7s: %5d placements, %4d over the minimum (%.1f%%), max %d, mean %.3f",
			key, x.cases, x.over, 100*float64(x.over)/float64(x.cases), x.max, float64(x.sum)/float64(x.cases))
		if testing.Verbose() && x.max > 0 {
			t.Logf("worst at %s:\n%s", key, x.worst)
		}
	}
}

// TestPlaceLauncherAndWorkers checks gangs of two shapes: a CPU-only
// launcher (1 task, whose CPU always fits) first, then a worker group drawn
// like the gangs above. The job is placed iff the worker group alone holds
// its minimum (MinMember counts the launcher, so the workers' minimum is
// MinMember-1), with exactly as many workers as the reference finds. The
// decision is all or nothing: a placed job has its launcher and its
// workers, on free GPUs, inside the required pack domain; a job that does
// not fit changes nothing; Release restores the state.
func TestPlaceLauncherAndWorkers(t *testing.T) {
	bruteMulti(t, false, bruteScale(bruteMultiCases))
}

// TestPlaceElasticShrinksPastLastGroup is the same with the launcher last.
// Job.Elastic says an elastic job may start "with any number of tasks
// between MinMember and the sum of the group counts", tasks dropped from
// the last group first. However that is read (launcher dropped first, or
// kept), a job whose worker group alone holds MinMember tasks can start,
// and one whose workers hold fewer than MinMember-1 cannot; in between
// the test accepts either outcome.
func TestPlaceElasticShrinksPastLastGroup(t *testing.T) {
	bruteMulti(t, true, bruteScale(bruteMultiCases/4))
}

func bruteMulti(t *testing.T, last bool, cases int) {
	var fails bruteFailures
	placed, launcherCrowds := 0, 0
	for i := range cases {
		rng := bruteRand(2+uint64(b2i(last)), i)
		f := bruteFleet(rng, bruteMaxNodes)
		s := newState(t, f)
		bruteOccupy(t, rng, s)
		keys, counts := bruteKeys(f)
		j, sp := bruteGang(rng, f, "mpi")
		launcher := job.Group{Name: "launcher", Count: 1, Task: job.Demand{CPUMilli: 500, MemoryMiB: 512}}
		wg, lg := 1, 0 // group indices of workers and launcher
		if last {
			wg, lg = 0, 1
			j.Groups = append(j.Groups, launcher)
		} else {
			j.Groups = append([]job.Group{launcher}, j.Groups...)
		}
		if j.MinMember > 0 {
			j.MinMember = sp.min + 1
		}
		free := make([]int, len(f.Nodes))
		for n := range free {
			free[n] = s.FreeGPUs(n)
		}
		ref := bruteReference(free, keys, counts, sp)
		desc := func() string { return bruteDescribe(i, s, free, j) }
		before := bruteSnapshot(s)
		p, u := s.Place(j)
		want, dontCare := ref.best >= sp.min, false
		if last {
			want = ref.best == sp.tasks || ref.best >= sp.min+1
			dontCare = !want && ref.best >= sp.min && j.MinMember > 0
		}
		switch {
		case u != nil && want:
			fails.add("not placed although the worker group fits",
				fmt.Sprintf("%s  reference: %d workers fit; corral: %v\n", desc(), ref.best, u))
		case u == nil && !want && !dontCare:
			fails.add("placed although the worker group does not fit",
				fmt.Sprintf("%s  reference: %d workers fit; corral placed %d tasks on %v\n", desc(), ref.best, len(p.Tasks), nodesOf(p)))
		}
		if u != nil {
			if d := before.diff(bruteSnapshot(s)); d != "" {
				fails.add("a gang that does not fit changed the state", desc()+"  "+d)
			}
			if d := bruteIndexDiff(s); d != "" {
				fails.add("index inconsistent after a failed placement", desc()+"  "+d)
			}
			continue
		}
		placed++
		workers, launchers := 0, 0
		for _, tk := range p.Tasks {
			switch tk.Group {
			case wg:
				workers++
			case lg:
				launchers++
				if len(tk.GPUs) != 0 || tk.CPUMilli != 500 || tk.Node < 0 || tk.Node >= len(f.Nodes) {
					fails.add("launcher task malformed", fmt.Sprintf("%s  %+v\n", desc(), tk))
				}
			default:
				fails.add("task of an unknown group", fmt.Sprintf("%s  %+v\n", desc(), tk))
			}
		}
		if launchers+workers < j.MinTasks() || workers > sp.tasks || launchers > 1 || (!last && launchers != 1) {
			fails.add("placement is not the whole gang (or an allowed elastic part of it)",
				fmt.Sprintf("%s  %d launchers, %d workers\n", desc(), launchers, workers))
		}
		if !last && workers != ref.best {
			fails.add("placed worker count is not the most that fit",
				fmt.Sprintf("%s  reference: %d workers; corral: %d on %v\n", desc(), ref.best, workers, nodesOf(p)))
		}
		if msg := bruteCheckTasks(s, before, keys, p.Tasks, wg, sp.gpus, sp); msg != "" {
			fails.add("worker placement breaks a constraint or takes a busy GPU",
				fmt.Sprintf("%s  corral placed %v: %s\n", desc(), nodesOf(p), msg))
		}
		if sp.pack >= 0 {
			for _, tk := range p.Tasks {
				if keys[tk.Node][sp.pack] != keys[p.Tasks[0].Node][sp.pack] {
					fails.add("launcher outside the workers' required pack domain",
						fmt.Sprintf("%s  corral placed %v\n", desc(), nodesOf(p)))
					break
				}
			}
		}
		if sp.spread >= 0 {
			// The spread limit applies to each group on its own (only the
			// workers are checked above): count how often the launcher
			// joins a spread domain that the workers already fill.
			per := map[int]int{}
			for _, tk := range p.Tasks {
				per[keys[tk.Node][sp.spread]]++
			}
			for _, c := range per {
				if c > sp.spreadMax {
					launcherCrowds++
					break
				}
			}
		}
		if err := s.Release(j.Name); err != nil {
			t.Fatal(err)
		}
		if d := before.diff(bruteSnapshot(s)); d != "" {
			fails.add("Release does not restore the state", desc()+"  "+d)
		}
	}
	t.Logf("%d cases, %d placed; in %d the launcher shares a spread domain the workers fill",
		cases, placed, launcherCrowds)
	fails.report(t, cases)
}

package placement

import (
	"math/rand"
	"testing"
)

func TestScoreFunctions(t *testing.T) {
	cases := []struct {
		name      string
		got, want int64
	}{
		// sigmoid(0) = 0.5; sigmoid(1) = 0.7311; sigmoid(-0.04) = 0.49000: truncation.
		{"fgd no change", fgdScore(500, 500), 50},
		{"fgd frees one GPU of fragment", fgdScore(1500, 500), 73},
		{"fgd small increase truncates down", fgdScore(0, 40), 49},
		{"fgd tiny increase still 49", fgdScore(0, 1), 49},
		// packing: empty 8-GPU node: max(33-8, 8) = 25; empty 2-GPU node: max(31, 2) = 31.
		{"packing empty 8-GPU node", packingScore([]int64{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, share(1, 500)), 25},
		{"packing empty 2-GPU node", packingScore([]int64{1000, 1000}, share(1, 500)), 31},
		// uses one free GPU on a used node: max(50-1, 33) = 49.
		{"packing free GPU on used node", packingScore([]int64{300, 1000}, whole(1, 1)), 49},
		// shares the 600-left GPU: 100 - (600*100/1000)/10 = 94.
		{"packing shared GPU", packingScore([]int64{600, 1000}, share(1, 500)), 94},
		// shares 990 left: 99 -> 100 - 9 = 91 (integer division of 99/10).
		{"packing truncation", packingScore([]int64{990, 1000}, share(1, 500)), 91},
		// bestfit: s = .5*(64000-8000)/128000 + .5*(4000-1000)/8000 = .21875 + .1875 -> int(59.375) = 59.
		{"bestfit raw", bestFitScore(64000, 4000, 8000, 1000), 59},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
		}
	}
}

// choose runs a policy on a cluster over all nodes in index order.
func choose(t *testing.T, p Policy, c *Cluster, pod *Pod) Choice {
	t.Helper()
	feasible := fitting(c, pod)
	if len(feasible) == 0 {
		t.Fatal("no feasible node")
	}
	return p.Place(c, pod, feasible)
}

func TestPoliciesOnHandMadeNodes(t *testing.T) {
	three := []Node{gpuNode("a", 64000, 4, "A"), gpuNode("b", 64000, 4, "A"), gpuNode("c", 64000, 4, "A")}
	cases := []struct {
		name     string
		policy   Policy
		cluster  *Cluster
		pod      *Pod
		wantNode int
		wantGPUs []int
	}{
		{"dotprod prefers the node whose free vector is least aligned", DotProd{},
			withLeft(three, []int64{1000, 1000, 1000, 1000}, []int64{0, 0, 1000, 500}, nil), whole(8000, 1), 1, []int{2}},
		{"clustering prefers a node holding only the same shape", Clustering{},
			clusterWithTags(three), share(1000, 200), 1, []int{0}},
		{"packing prefers sharing a used GPU", Packing{},
			withLeft(three, nil, []int64{1000, 1000, 400, 1000}, nil), share(1000, 300), 1, []int{2}},
		{"bestfit prefers the fullest node", BestFit{},
			withLeft(three, []int64{1000, 1000, 1000, 1000}, []int64{1000, 0, 0, 1000}, []int64{1000, 1000, 0, 1000}), whole(1000, 1), 1, []int{0}},
		{"equal scores go to the earliest node", BestFit{},
			withLeft(three, nil, nil, nil), whole(1000, 1), 0, []int{0}},
		{"fgd keeps the free GPUs whole", NewFGD(Mix{{CPUMilli: 1000, GPUMilli: 1000, NumGPU: 1, Weight: 1}}),
			withLeft(three, nil, []int64{1000, 1000, 1000, 500}, nil), share(1000, 500), 1, []int{3}},
		{"spread prefers the emptiest node", Spread{},
			withLeft(three, []int64{0, 1000, 1000, 1000}, nil, []int64{500, 1000, 1000, 1000}), share(1000, 100), 1, []int{0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := choose(t, tc.policy, tc.cluster, tc.pod)
			if got.Node != tc.wantNode || len(got.GPUs) != len(tc.wantGPUs) || (len(got.GPUs) > 0 && got.GPUs[0] != tc.wantGPUs[0]) {
				t.Errorf("chose node %d GPUs %v, want node %d GPUs %v", got.Node, got.GPUs, tc.wantNode, tc.wantGPUs)
			}
		})
	}
}

// clusterWithTags: node a holds a 1-GPU pod, node b a sharing pod, c is empty.
func clusterWithTags(nodes []Node) *Cluster {
	c := NewCluster(nodes)
	c.Bind(*whole(1000, 1), Choice{Node: 0, GPUs: []int{0}})
	c.Bind(*share(1000, 500), Choice{Node: 1, GPUs: []int{0}})
	return c
}

func TestBestFitNormalisationTies(t *testing.T) {
	// Raw scores 59, 60 and 0-ish normalise with integer division; the two
	// top nodes must keep their order and the earliest of equals wins.
	nodes := []Node{gpuNode("a", 128000, 8, "A"), gpuNode("b", 128000, 8, "A")}
	c := withLeft(nodes, nil, nil)
	if got := choose(t, BestFit{}, c, whole(1000, 1)); got.Node != 0 {
		t.Errorf("all-equal scores normalise to 0 and the first node wins; got node %d", got.Node)
	}
}

func TestRandomDrawsFromTheSeed(t *testing.T) {
	nodes := []Node{gpuNode("a", 64000, 4, "A"), gpuNode("b", 64000, 4, "A"), gpuNode("c", 64000, 4, "A")}
	pick := func(seed int64) []Choice {
		p := &Random{rng: rand.New(rand.NewSource(seed))}
		c := NewCluster(nodes)
		var out []Choice
		for i := 0; i < 20; i++ {
			ch := choose(t, p, c, share(1000, 300))
			c.Bind(*share(1000, 300), ch)
			out = append(out, ch)
		}
		return out
	}
	a, b := pick(7), pick(7)
	seen := map[int]bool{}
	for i := range a {
		if a[i].Node != b[i].Node || a[i].GPUs[0] != b[i].GPUs[0] {
			t.Fatal("same seed gave different choices")
		}
		seen[a[i].Node] = true
	}
	if len(seen) < 2 {
		t.Error("20 random placements all landed on one node")
	}
}

// TestNoGPUOverAllocated places random pods on random small clusters with
// every policy: no GPU may ever go below 0 or above 1000 milli left, and
// the cluster's used milli must equal what the GPUs report.
func TestNoGPUOverAllocated(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	models := []string{"A", "B"}
	for trial := 0; trial < 30; trial++ {
		var nodes []Node
		for i := 0; i < 1+rng.Intn(6); i++ {
			nodes = append(nodes, gpuNode(string(rune('a'+i)), int64(8000+rng.Intn(64)*1000), []int{1, 2, 4, 8}[rng.Intn(4)], models[rng.Intn(2)]))
		}
		pods := randomPods(rng, 60, models)
		for _, name := range Names() {
			p, err := New(name, Env{Rand: rand.New(rand.NewSource(int64(trial))), Mix: TypicalMix(pods, 95)})
			if err != nil {
				t.Fatal(err)
			}
			checkFill(t, name, NewCluster(nodes), p, pods)
		}
	}
}

func randomPods(rng *rand.Rand, n int, models []string) []Pod {
	pods := make([]Pod, n)
	for i := range pods {
		p := Pod{Name: "p", CPUMilli: int64(rng.Intn(8)) * 1000}
		switch rng.Intn(4) {
		case 0:
		case 1:
			p.NumGPU, p.GPUMilli = 1, int64(1+rng.Intn(99))*10
		default:
			p.NumGPU, p.GPUMilli = []int{1, 1, 2, 4, 8}[rng.Intn(5)], 1000
		}
		if p.IsGPU() && rng.Intn(4) == 0 {
			p.Models = []string{models[rng.Intn(len(models))]}
		}
		pods[i] = p
	}
	return pods
}

func checkFill(t *testing.T, name string, c *Cluster, p Policy, pods []Pod) {
	t.Helper()
	for i := range pods {
		pod := &pods[i]
		if o, ok := p.(Observer); ok {
			o.Observe(pod)
		}
		feasible := fitting(c, pod)
		if len(feasible) == 0 {
			continue
		}
		ch := p.Place(c, pod, feasible)
		if !c.Fits(ch.Node, pod) {
			t.Fatalf("%s chose node %d that does not fit", name, ch.Node)
		}
		c.Bind(*pod, ch)
	}
	var used int64
	for n := range c.Nodes {
		for _, l := range c.GPULeft[n] {
			if l < 0 || l > MilliPerGPU {
				t.Fatalf("%s: a GPU has %d milli left", name, l)
			}
			used += MilliPerGPU - l
		}
		if c.CPULeft[n] < 0 || c.MemLeft[n] < 0 {
			t.Fatalf("%s: node %d over-allocated: cpu %d mem %d", name, n, c.CPULeft[n], c.MemLeft[n])
		}
	}
	if used != c.UsedGPUMilli() {
		t.Fatalf("%s: used %d by GPUs, %d by the cluster", name, used, c.UsedGPUMilli())
	}
}

func TestEveryPolicyIsDescribed(t *testing.T) {
	for _, name := range Names() {
		if Describe(name) == "" {
			t.Errorf("policy %s has no description", name)
		}
		if _, err := New(name, Env{}); err != nil {
			t.Errorf("policy %s: %v", name, err)
		}
	}
}

package fleet

import (
	"fmt"
	"github.com/corral-sched/corral/internal/gpu"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const examplesDir = "../../examples/fleets"

// domainCounts returns the number of distinct domains at each level.
func domainCounts(f *Fleet) []int {
	counts := make([]int, len(f.Levels))
	for l := range f.Levels {
		seen := map[string]bool{}
		for i := range f.Nodes {
			seen[strings.Join(f.Nodes[i].Domains[:l+1], "/")] = true
		}
		counts[l] = len(seen)
	}
	return counts
}

type poolCounts struct{ nodes, gpus, spares int }

func countPools(f *Fleet) map[string]poolCounts {
	out := map[string]poolCounts{}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		c := out[n.Pool]
		c.nodes++
		c.gpus += n.GPUs
		if n.Spare {
			c.spares++
		}
		out[n.Pool] = c
	}
	return out
}

func node(t *testing.T, f *Fleet, name string) *Node {
	t.Helper()
	for i := range f.Nodes {
		if f.Nodes[i].Name == name {
			return &f.Nodes[i]
		}
	}
	t.Fatalf("no node %s", name)
	return nil
}

func TestExamples(t *testing.T) {
	tests := []struct {
		file    string
		levels  []string
		nvlink  string
		pools   map[string]poolCounts
		domains []int
		check   func(t *testing.T, f *Fleet)
	}{{
		file:    "small.yaml",
		levels:  []string{"zone", "rack"},
		pools:   map[string]poolCounts{"h100": {4, 32, 0}, "l4": {2, 8, 0}, "cpu": {1, 0, 0}},
		domains: []int{1, 4},
		check: func(t *testing.T, f *Fleet) {
			if n := node(t, f, "h100-0003"); n.Health != Cordoned || n.Path() != "lab/rack-1" {
				t.Errorf("h100-0003: health %q path %s, want cordoned lab/rack-1", n.Health, n.Path())
			}
			if n := node(t, f, "l4-0001"); n.TimeSlices != 4 || n.NVLink != nil || len(n.PCIe) != 2 || n.Path() != "lab/rack-2" {
				t.Errorf("l4-0001: %+v", n)
			}
			if n := node(t, f, "cpu-0000"); n.CPUMilli != 64000 || n.MemoryMiB != 512<<10 || n.GPUs != 0 {
				t.Errorf("cpu-0000: %+v", n)
			}
		},
	}, {
		file:   "h100-superpod.yaml",
		levels: []string{"zone", "spine", "block", "rack"},
		pools: map[string]poolCounts{
			"train-h100": {256, 2048, 8},
			"mig-a100":   {32, 256, 0},
			"infer-l4":   {64, 512, 0},
		},
		domains: []int{1, 2 + 1 + 1, 8 + 1 + 1, 64 + 8 + 4},
		check: func(t *testing.T, f *Fleet) {
			if n := node(t, f, "train-h100-0031"); !n.Spare || n.Path() != "us-east-1a/spine-0/block-0/rack-7" {
				t.Errorf("train-h100-0031: spare %v at %s, want the spare of block-0", n.Spare, n.Path())
			}
			if n := node(t, f, "train-h100-0003"); n.Health != Unhealthy {
				t.Errorf("train-h100-0003: health %q", n.Health)
			}
			if n := node(t, f, "mig-a100-0000"); n.MIG != MIGDynamic || len(n.MIGLayout) != 3 || n.GPUModel != "A100-80GB" {
				t.Errorf("mig-a100-0000: %+v", n)
			}
			if n := node(t, f, "infer-l4-0000"); n.TimeSlices != 4 || len(n.NUMA) != 2 || n.NVLink != nil {
				t.Errorf("infer-l4-0000: %+v", n)
			}
		},
	}, {
		file:    "gb200-nvl72.yaml",
		levels:  []string{"zone", "block", "rack"},
		nvlink:  "rack",
		pools:   map[string]poolCounts{"gb200": {144, 576, 8}},
		domains: []int{1, 2, 8},
		check: func(t *testing.T, f *Fleet) {
			for _, name := range []string{"gb200-0017", "gb200-0035", "gb200-0143"} {
				if !node(t, f, name).Spare {
					t.Errorf("%s is not a spare", name)
				}
			}
			if n := node(t, f, "gb200-0018"); n.Spare || n.GPUModel != "B200-180GB" || n.Path() != "zone-0/block-0/rack-1" {
				t.Errorf("gb200-0018: %+v", n)
			}
			if l, _ := f.LevelIndex(NVLinkLevel); l != 2 {
				t.Errorf("nvlink level index %d, want 2 (rack)", l)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := Load(filepath.Join(examplesDir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.Levels, tt.levels) || f.NVLinkDomain != tt.nvlink {
				t.Errorf("levels %v nvlink %q, want %v %q", f.Levels, f.NVLinkDomain, tt.levels, tt.nvlink)
			}
			if got := countPools(f); fmt.Sprint(got) != fmt.Sprint(tt.pools) {
				t.Errorf("pools (nodes, gpus, spares) %v, want %v", got, tt.pools)
			}
			if got := domainCounts(f); !slices.Equal(got, tt.domains) {
				t.Errorf("domains per level %v, want %v", got, tt.domains)
			}
			tt.check(t, f)
		})
	}
}

// TestAllExamplesLoad loads every fleet file in examples/fleets, including
// ones added later.
func TestAllExamplesLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, file := range files {
		if _, err := Load(file); err != nil {
			t.Error(err)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Fatalf("error %v, want one naming nope.yaml", err)
	}
}

// pool is a valid pool entry; tests append fields to it.
const pool = `levels: [zone, rack]
pools:
  - name: p
    nodes: 8
    gpuModel: H100
    gpusPerNode: 8
    cpu: 96
    memory: 1Ti
`

// TestParseErrors checks that each bad input fails with an error naming
// the file, the line marked "# <-" (none when unmarked) and the problem.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"unknown pool field", pool + "    gpuModle: H100 # <-\n", `unknown field "gpuModle" in a pool (known: name, nodes,`},
		{"unknown top field", "level: [rack] # <-\n" + pool[len("levels: [zone, rack]\n"):], `unknown field "level" in the fleet file`},
		{"unknown spares field", pool + "    spares: {level: rack, cnt: 1} # <-\n", `unknown field "cnt" in spares`},
		{"duplicate key", pool + "    nodes: 4 # <-\n", `"nodes" already defined`},
		{"wrong type", strings.Replace(pool, "nodes: 8", "nodes: many # <-", 1), "cannot unmarshal"},
		{"pools not a list", "levels: []\npools: {name: p} # <-\n", "cannot unmarshal !!map into a list of pools"},
		{"spares not a mapping", pool + "    spares: rack # <-\n", "into spares {level, count}"},
		{"syntax", pool + "    labels: {a: [ # <-\n", "did not find"},
		{"empty file", "# nothing\n", "empty fleet file"},
		{"second document", pool + "--- # <-\nlevels: []\n", "a second YAML document"},
		{"no pools", "levels: [rack]\npools: [] # <-\n", "no pools"},
		{"reserved level", "levels: [zone, node] # <-\npools: []\n", `reserved name "node"`},
		{"nvlink domain", "levels: [rack]\nnvlinkDomain: rak # <-\n" + pool[len("levels: [zone, rack]\n"):], `nvlinkDomain "rak" is not one of the levels`},

		{"unknown model", strings.Replace(pool, "gpuModel: H100", "gpuModel: H10 # <-", 1), `pool "p": gpu: unknown GPU model "H10" (known: `},
		{"no model", strings.Replace(strings.Replace(pool, "    gpuModel: H100\n", "", 1), "gpusPerNode: 8", "gpusPerNode: 8 # <-", 1), "8 GPUs per node and no gpuModel"},
		{"model without gpus", strings.Replace(strings.Replace(pool, "    gpusPerNode: 8\n", "", 1), "gpuModel: H100", "gpuModel: H100 # <-", 1), "gpuModel needs gpusPerNode > 0"},
		{"MIG on a non-MIG model", strings.Replace(pool, "H100", "L4", 1) + "    mig: static # <-\n    migLayout: [1g.10gb]\n", "does not support MIG"},
		{"unknown MIG mode", pool + "    mig: sometimes # <-\n", `unknown MIG mode "sometimes"`},
		{"unknown purpose", pool + "    purpose: gaming # <-\n", `purpose "gaming", want one of training, inference, development`},
		{"unknown capacity type", pool + "    capacityType: cheap # <-\n", `capacityType "cheap", want one of on-demand, spot, reserved`},
		{"negative price", pool + "    pricePerGPUHour: -2 # <-\n", `pricePerGPUHour -2, want a price of at least 0`},
		{"price not a number", pool + "    pricePerGPUHour: cheap # <-\n", "cannot unmarshal"},
		{"bad MIG profile", pool + "    mig: static # <-\n    migLayout: [9g.99gb]\n", "MIG layout"},
		{"MIG layout without mode", pool + "    migLayout: [1g.10gb] # <-\n", "MIG mode is off"},
		{"static MIG without layout", pool + "    mig: static # <-\n", "needs a layout"},
		{"MIG and time-slicing", pool + "    mig: dynamic # <-\n    timeSlices: 2\n", "time-slicing and MIG"},

		{"memory unit GB", strings.Replace(pool, "memory: 1Ti", "memory: 2048GB # <-", 1), `memory: "2048GB": want an integer with a unit Ki, Mi, Gi or Ti`},
		{"memory no unit", strings.Replace(pool, "memory: 1Ti", "memory: 2048 # <-", 1), `memory: "2048": want`},
		{"memory Ki not whole MiB", strings.Replace(pool, "memory: 1Ti", "memory: 1000Ki # <-", 1), "not a whole number of MiB"},
		{"time slices without gpus", "levels: []\npools:\n  - {name: c, nodes: 1, cpu: 1, memory: 1Gi,\n     timeSlices: 2} # <-\n", "timeSlices needs gpusPerNode > 0"},
		{"memory missing", strings.Replace(strings.Replace(pool, "    memory: 1Ti\n", "", 1), "name: p", "name: p # <-", 1), "memory: required"},
		{"cpu decimals", strings.Replace(pool, "cpu: 96", "cpu: 1.2345 # <-", 1), `cpu: "1.2345": want cores`},
		{"cpu words", strings.Replace(pool, "cpu: 96", "cpu: lots # <-", 1), `cpu: "lots"`},

		{"negative nodes", strings.Replace(pool, "nodes: 8", "nodes: -1 # <-", 1), "nodes -1, want at least 1"},
		{"zero nodes", strings.Replace(pool, "nodes: 8", "nodes: 0 # <-", 1), "nodes 0, want at least 1"},
		{"negative gpus", strings.Replace(pool, "gpusPerNode: 8", "gpusPerNode: -8 # <-", 1), "gpusPerNode -8, want at least 0"},
		{"negative time slices", pool + "    timeSlices: -2 # <-\n", "timeSlices -2, want at least 0"},
		{"negative fan-out", pool + "    perDomain:\n      rack: -2 # <-\n", "perDomain rack: -2, want at least 1"},
		{"negative spares", pool + "    spares:\n      level: rack\n      count: -1 # <-\n", "spares count -1, want at least 0"},

		{"island out of range", pool + "    nvlink: [[0, 1, 8]] # <-\n", "nvlink islands: GPU index 8 out of range 0..7"},
		{"island out of range, block style", pool + "    nvlink: # <-\n      - [0, 1]\n      - [2, 9]\n", "GPU index 9 out of range"},
		{"island overlap", pool + "    numa: [[0, 1], [1, 2]] # <-\n", "numa islands: GPU 1 is in two islands"},
		{"unknown topology", pool + "    nodeTopology: nvl72 # <-\n", `unknown node topology "nvl72"`},

		{"spares fill the domain", pool + "    perDomain: {rack: 4}\n    spares: {level: rack, count: 4} # <-\n", "spares count 4 leaves no working node in a rack of 4 nodes"},
		{"spares fill a partial domain", strings.Replace(pool, "nodes: 8", "nodes: 9", 1) + "    perDomain: {rack: 4}\n    spares: {level: rack, count: 1} # <-\n", "in a rack of 1 nodes"},
		{"spares fill the pool", pool + "    spares: {level: zone, count: 8} # <-\n", "in a zone of 8 nodes"},
		{"unknown level in perDomain", pool + "    perDomain: {rak: 4} # <-\n", `pool "p": unknown level "rak" in perDomain (levels: zone, rack)`},
		{"unknown level in at", pool + "    at: {region: eu} # <-\n", `unknown level "region" in at`},
		{"unknown level in spares", pool + "    spares: {level: node, count: 1} # <-\n", `unknown level "node" in spares`},
		{"spares without level", pool + "    spares: {count: 1} # <-\n", `unknown level "" in spares`},
		{"fan-out without inner", pool + "    perDomain: {zone: 2} # <-\n", "perDomain zone needs perDomain rack too"},
		{"at over several domains", pool + "    perDomain: {rack: 4}\n    at: {rack: r1} # <-\n", `at rack: "r1" names one rack, but perDomain spreads the 8 nodes over 2`},
		{"empty at", pool + "    at: {zone: \"\"} # <-\n", "at zone: empty domain name"},

		{"duplicate pool", pool + "  - name: p # <-\n    nodes: 1\n    cpu: 1\n    memory: 1Gi\n", `pool "p": duplicate pool name (first at line 3)`},
		{"pool without name", pool + "  - nodes: 1 # <-\n    cpu: 1\n    memory: 1Gi\n", `pool "#2": no name`},
		{"health of unknown node", pool + "    health: {p-0008: unhealthy} # <-\n", `health: no node "p-0008" in the pool (nodes p-0000 to p-0007)`},
		{"health unpadded", pool + "    health: {p-3: unhealthy} # <-\n", `no node "p-3"`},
		{"bad health", pool + "    health:\n      p-0001: sick # <-\n", `health of p-0001: "sick", want healthy, unhealthy or cordoned`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.yaml), "bad.yaml")
			if err == nil {
				t.Fatalf("no error; parsed %d nodes", len(f.Nodes))
			}
			prefix := "bad.yaml: "
			if line := markedLine(tt.yaml); line > 0 {
				prefix = fmt.Sprintf("bad.yaml:%d: ", line)
			}
			for _, msg := range strings.Split(err.Error(), "\n") {
				if strings.HasPrefix(msg, prefix) && strings.Contains(msg, tt.want) {
					return
				}
			}
			t.Errorf("error:\n%v\nwant a line starting %q containing %q", err, prefix, tt.want)
		})
	}
}

// markedLine is the 1-based line holding "# <-", or 0.
func markedLine(text string) int {
	for i, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "# <-") {
			return i + 1
		}
	}
	return 0
}

func TestParseReportsEveryPool(t *testing.T) {
	text := strings.Replace(pool, "memory: 1Ti", "memory: 1TB", 1) +
		"  - name: q\n    nodes: -1\n    cpu: 1\n    memory: 1Gi\n"
	_, err := Parse([]byte(text), "bad.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), "bad.yaml:8: pool \"p\": memory:") ||
		!strings.Contains(err.Error(), "\nbad.yaml:10: pool \"q\": nodes -1") {
		t.Fatalf("error %v, want one line for each pool", err)
	}
}

// TestPlacement checks domain names, fan-out, at and spares on small pools.
func TestPlacement(t *testing.T) {
	const text = `levels: [zone, rack]
pools:
  - {name: a, nodes: 4, cpu: 1, memory: 1Gi, perDomain: {rack: 2}, at: {zone: z}, spares: {level: rack, count: 1}}
  - {name: b, nodes: 3, cpu: 1, memory: 1Gi, perDomain: {rack: 2, zone: 1}}
  - {name: c, nodes: 2, cpu: 1, memory: 1Gi, at: {zone: z, rack: shared}}
  - {name: d, nodes: 1, cpu: 1, memory: 1Gi, at: {zone: z, rack: shared}}
  - {name: e, nodes: 5, cpu: 1, memory: 1Gi, perDomain: {rack: 3}, spares: {level: zone, count: 2}}
`
	want := []string{
		"a-0000 z/rack-0", "a-0001 z/rack-0 spare",
		"a-0002 z/rack-1", "a-0003 z/rack-1 spare",
		"b-0000 zone-0/rack-2", "b-0001 zone-0/rack-2",
		"b-0002 zone-1/rack-3",
		"c-0000 z/shared", "c-0001 z/shared",
		"d-0000 z/shared",
		"e-0000 zone-2/rack-4", "e-0001 zone-2/rack-4", "e-0002 zone-2/rack-4",
		"e-0003 zone-2/rack-5 spare", "e-0004 zone-2/rack-5 spare",
	}
	f, err := Parse([]byte(text), "placement.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range f.Nodes {
		n := &f.Nodes[i]
		s := n.Name + " " + n.Path()
		if n.Spare {
			s += " spare"
		}
		got = append(got, s)
	}
	if !slices.Equal(got, want) {
		t.Errorf("nodes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNodesShareNoLabels(t *testing.T) {
	f, err := Load(filepath.Join(examplesDir, "small.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f.Nodes[0].Labels["purpose"] = "changed"
	f.Nodes[0].NUMA[0][0] = 99
	if f.Nodes[1].Labels["purpose"] != "training" || f.Nodes[1].NUMA[0][0] != 0 {
		t.Errorf("node 1 changed with node 0: %+v", f.Nodes[1])
	}
}

// A pool's purpose and capacity type become node labels; spot capacity
// taints the nodes so that serving stays off them.
func TestPurposeAndCapacityType(t *testing.T) {
	f, err := Parse([]byte(pool+"    purpose: training\n    capacityType: spot\n    labels: {team: ml}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := &f.Nodes[0]
	if n.Labels[PurposeLabel] != "training" || n.CapacityType() != CapacitySpot || n.Labels["team"] != "ml" || !slices.Contains(n.Taints, SpotTaint) {
		t.Errorf("node: labels %v, taints %v, capacity type %s", n.Labels, n.Taints, n.CapacityType())
	}
	plain, err := Parse([]byte(pool), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c := plain.Nodes[0].CapacityType(); c != CapacityOnDemand {
		t.Errorf("a pool without a capacity type is %s, want on-demand", c)
	}
}

func TestSortedKeepsDomainsContiguous(t *testing.T) {
	fleets := map[string]*Fleet{
		"interleaved": {Levels: []string{"zone", "rack"}, Nodes: []Node{
			{Name: "0", Domains: []string{"z1", "r1"}},
			{Name: "1", Domains: []string{"z2", "r1"}},
			{Name: "2", Domains: []string{"z1", "r2"}},
			{Name: "3", Domains: []string{"z1", "r1"}},
			{Name: "4", Domains: []string{"z2", "r2"}},
			{Name: "5", Domains: []string{"z2", "r1"}},
		}},
	}
	files, _ := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	for _, file := range files {
		f, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		// Reverse the nodes so that Sorted has work to do.
		slices.Reverse(f.Nodes)
		fleets[filepath.Base(file)] = f
	}
	for name, f := range fleets {
		t.Run(name, func(t *testing.T) { checkContiguous(t, f, f.Sorted()) })
	}
	order := fleets["interleaved"].Sorted()
	if want := []int{0, 3, 2, 1, 5, 4}; !slices.Equal(order, want) {
		t.Errorf("interleaved: order %v, want %v", order, want)
	}
}

// checkContiguous fails unless order is a permutation of the nodes in
// which every domain is one contiguous run and the nodes of one innermost
// domain keep their relative order.
func checkContiguous(t *testing.T, f *Fleet, order []int) {
	t.Helper()
	if err := contiguous(f, order); err != nil {
		t.Fatal(err)
	}
}

func contiguous(f *Fleet, order []int) error {
	if !slices.Equal(slices.Sorted(slices.Values(order)), identity(len(f.Nodes))) {
		return fmt.Errorf("order %v is not a permutation of %d nodes", order, len(f.Nodes))
	}
	for l := 1; l <= len(f.Levels); l++ {
		done := map[string]bool{}
		prev := ""
		last := map[string]int{}
		for _, i := range order {
			key := strings.Join(f.Nodes[i].Domains[:l], "/")
			if key != prev {
				if done[key] {
					return fmt.Errorf("level %s: domain %q is split", f.Levels[l-1], key)
				}
				done[prev], prev = true, key
			}
			if j, ok := last[key]; ok && l == len(f.Levels) && j > i {
				return fmt.Errorf("domain %q: node %d before node %d", key, j, i)
			}
			last[key] = i
		}
	}
	return nil
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestContiguousCheck(t *testing.T) {
	f := &Fleet{Levels: []string{"rack"}, Nodes: []Node{
		{Domains: []string{"r1"}}, {Domains: []string{"r2"}}, {Domains: []string{"r1"}},
	}}
	for _, tt := range []struct {
		order []int
		ok    bool
	}{{[]int{0, 2, 1}, true}, {[]int{1, 0, 2}, true}, {[]int{0, 1, 2}, false}, {[]int{2, 0, 1}, false}, {[]int{0, 0, 1}, false}, {[]int{0, 2}, false}} {
		if err := contiguous(f, tt.order); (err == nil) != tt.ok {
			t.Errorf("order %v: error %v, want ok %v", tt.order, err, tt.ok)
		}
	}
}

func TestExampleReadme(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(examplesDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	for _, file := range files {
		if !strings.Contains(string(readme), filepath.Base(file)) {
			t.Errorf("README.md does not mention %s", filepath.Base(file))
		}
	}
}

func TestIslands(t *testing.T) {
	tests := []struct {
		extra              string
		nvlink, pcie, numa string
	}{
		{"", "[]", "[]", "[]"},
		{"nodeTopology: none", "[]", "[]", "[]"},
		{"nodeTopology: hgx", "[[0 1 2 3 4 5]]", "[[0 1] [2 3] [4 5]]", "[[0 1 2] [3 4 5]]"},
		{"nodeTopology: pcie", "[]", "[[0 1] [2 3] [4 5]]", "[[0 1 2] [3 4 5]]"},
		{"nodeTopology: hgx, nvlink: []", "[]", "[[0 1] [2 3] [4 5]]", "[[0 1 2] [3 4 5]]"},
		{"nodeTopology: hgx, nvlink: [[0, 1, 2], [3, 4, 5]], numa: [[0, 1, 2, 3, 4, 5]]", "[[0 1 2] [3 4 5]]", "[[0 1] [2 3] [4 5]]", "[[0 1 2 3 4 5]]"},
		{"pcie: [[5, 4]]", "[]", "[[5 4]]", "[]"},
	}
	for _, tt := range tests {
		text := "levels: []\npools:\n  - {name: p, nodes: 1, gpuModel: L40S, gpusPerNode: 6, cpu: 1, memory: 1Gi"
		if tt.extra != "" {
			text += ", " + tt.extra
		}
		text += "}\n"
		f, err := Parse([]byte(text), "islands.yaml")
		if err != nil {
			t.Errorf("%s: %v", tt.extra, err)
			continue
		}
		n := f.Nodes[0]
		if got := fmt.Sprint(n.NVLink, n.PCIe, n.NUMA); got != fmt.Sprint(tt.nvlink, " ", tt.pcie, " ", tt.numa) {
			t.Errorf("%s: islands %s, want %s %s %s", tt.extra, got, tt.nvlink, tt.pcie, tt.numa)
		}
	}
}

func TestMergeKeys(t *testing.T) {
	text := `levels: [rack]
pools:
  - &h100 {name: a, nodes: 2, gpuModel: H100, gpusPerNode: 8, cpu: 1, memory: 1Gi, nodeTopology: hgx}
  - <<: *h100
    name: b
    nodes: 3
`
	f, err := Parse([]byte(text), "merge.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := countPools(f); got["b"] != (poolCounts{3, 24, 0}) || len(f.Nodes[4].NVLink) != 1 {
		t.Errorf("pools %v, node %+v", got, f.Nodes[4])
	}
}

// Fleets of the newer and the AMD models load, by catalog name or by the
// product names device plugins label nodes with, with MIG where NVIDIA
// publishes profiles for the model and the resource name of its vendor.
func TestFleetsOfNewerModelsLoad(t *testing.T) {
	tests := []struct {
		gpuModel, wantModel, resource string
		migLayout                     string
	}{
		{"H100-NVL", "H100-NVL", "nvidia.com/gpu", "[3g.47gb, 3g.47gb]"},
		{"NVIDIA-H100-PCIe", "H100-80GB", "nvidia.com/gpu", "[7g.80gb]"},
		{"NVIDIA-H200-NVL", "H200-NVL", "nvidia.com/gpu", "[1g.18gb, 2g.35gb]"},
		{"NVIDIA-GH200-480GB", "GH200-96GB", "nvidia.com/gpu", "[4g.48gb]"},
		{"B200", "B200-180GB", "nvidia.com/gpu", "[3g.90gb]"},
		{"GB200", "GB200-186GB", "nvidia.com/gpu", "[1g.23gb, 3g.93gb]"},
		{"L40", "L40", "nvidia.com/gpu", ""},
		{"L40S", "L40S", "nvidia.com/gpu", ""},
		{"NVIDIA-RTX-6000-Ada-Generation", "RTX-6000-Ada", "nvidia.com/gpu", ""},
		{"A10", "A10", "nvidia.com/gpu", ""},
		{"AMD_Instinct_MI300X", "MI300X", "amd.com/gpu", ""},
		{"MI325X", "MI325X", "amd.com/gpu", ""},
	}
	for _, tt := range tests {
		t.Run(tt.gpuModel, func(t *testing.T) {
			mig := ""
			if tt.migLayout != "" {
				mig = "\n    mig: static\n    migLayout: " + tt.migLayout
			}
			text := "pools:\n  - name: p\n    nodes: 2\n    gpuModel: " + tt.gpuModel + "\n    gpusPerNode: 8\n    cpu: 96\n    memory: 1024Gi" + mig + "\n"
			f, err := Parse([]byte(text), "f.yaml")
			if err != nil {
				t.Fatal(err)
			}
			m, err := gpu.Lookup(f.Nodes[0].GPUModel)
			if err != nil || m.Name != tt.wantModel || m.ResourceName() != tt.resource || m.MemoryMiB == 0 {
				t.Errorf("model %+v (%v), want %s with %s", m, err, tt.wantModel, tt.resource)
			}
		})
	}
}

// TestPricePerGPUHour reads each pool's price onto its nodes.
func TestPricePerGPUHour(t *testing.T) {
	f, err := Load(filepath.Join(examplesDir, "two-models.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"H100-80GB": 3, "H200-141GB": 4}
	for _, n := range f.Nodes {
		if n.PricePerGPUHour != want[n.GPUModel] {
			t.Errorf("node %s (%s): price %g, want %g", n.Name, n.GPUModel, n.PricePerGPUHour, want[n.GPUModel])
		}
	}
}

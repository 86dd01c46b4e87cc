package fleet

// A fleet file describes a fleet in YAML as pools of identical nodes:
//
//	levels: [zone, block, rack]     # topology levels, outermost first; the node level is implied
//	nvlinkDomain: rack              # optional: the level whose domains are rack-scale NVLink domains
//	pools:
//	  - name: train-h100            # required, unique; nodes are named train-h100-0000, -0001, ...
//	    nodes: 256                  # required, at least 1
//	    gpuModel: H100-80GB         # GPU catalog name or alias; required when gpusPerNode > 0
//	    gpusPerNode: 8              # 0 or omitted: a CPU-only pool
//	    cpu: 192                    # required: cores ("192", "1.5") or millicores ("192000m")
//	    memory: 2048Gi              # required: an integer with a binary unit Ki, Mi, Gi or Ti (2048GiB also)
//	    nodeTopology: hgx           # islands preset: hgx, pcie or none (the default)
//	    nvlink: [[0,1,2,3],[4,5,6,7]] # explicit islands replace the preset's; likewise pcie: and numa:
//	    mig: dynamic                # static or dynamic; omitted: no MIG
//	    migLayout: [2g.20gb, 2g.20gb, 3g.40gb] # the initial layout of every GPU, placed in order
//	    timeSlices: 4               # each GPU offered as 4 time-sliced shares
//	    labels: {purpose: training}
//	    perDomain: {rack: 16, block: 8, zone: 4} # 16 nodes per rack, 8 racks per block, 4 blocks per zone
//	    at: {zone: us-east-1a}      # fixed domain names instead of generated ones
//	    spares: {level: rack, count: 1} # the last node of every rack is a hot spare
//	    health: {train-h100-0003: unhealthy} # healthy (the default), unhealthy or cordoned
//	    purpose: training           # training, inference or development (label corral.sh/purpose)
//	    capacityType: spot          # on-demand, spot or reserved (label corral.sh/capacity-type); spot adds the taint "spot"
//	    pricePerGPUHour: 2.49       # what one GPU costs an hour; breaks ties between models for jobs asking by GPU memory
//
// Node topology presets: hgx is one NVLink island of all the GPUs, PCIe
// switches of 2 GPUs and two NUMA halves; pcie is the same without NVLink;
// none has no islands.
//
// Placement: perDomain[L] is how many domains of the next level in (nodes,
// for the innermost level) one domain at level L holds. A level missing
// from perDomain has one domain for the whole pool; it then needs every
// level outside it to be missing too. Nodes fill domains in order and the
// last domain at a level may be partly filled. Domains are named
// <level>-<n>, numbered per level across all pools in file order, so two
// pools never share a generated domain; at[L] names the pool's domain at L
// instead and requires the pool to fit in one domain there. Pools share a
// domain when at names it, and every level outside it, identically.
//
// Spares: the last count nodes of every domain of the pool at the given
// level are hot spares; every domain must keep at least one other node.
//
// Decoding is strict: an unknown field, a duplicate key or a value of the
// wrong type is an error. Every error names the file and, where known, the
// line. The examples are in examples/fleets/.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/quantity"
)

// fileFleet is the top of a fleet file.
type fileFleet struct {
	Levels       []string   `yaml:"levels"`
	NVLinkDomain string     `yaml:"nvlinkDomain"`
	Pools        []filePool `yaml:"pools"`
}

// filePool is one pool entry of a fleet file.
type filePool struct {
	Name         string            `yaml:"name"`
	Nodes        int               `yaml:"nodes"`
	GPUModel     string            `yaml:"gpuModel"`
	GPUsPerNode  int               `yaml:"gpusPerNode"`
	CPU          string            `yaml:"cpu"`
	Memory       string            `yaml:"memory"`
	NodeTopology string            `yaml:"nodeTopology"`
	NVLink       [][]int           `yaml:"nvlink"`
	PCIe         [][]int           `yaml:"pcie"`
	NUMA         [][]int           `yaml:"numa"`
	MIG          string            `yaml:"mig"`
	MIGLayout    []string          `yaml:"migLayout"`
	TimeSlices   int               `yaml:"timeSlices"`
	Labels       map[string]string `yaml:"labels"`
	Taints       []string          `yaml:"taints"`
	PerDomain    map[string]int    `yaml:"perDomain"`
	At           map[string]string `yaml:"at"`
	Spares       *fileSpares       `yaml:"spares"`
	Health       map[string]string `yaml:"health"`
	Purpose      string            `yaml:"purpose"`
	CapacityType string            `yaml:"capacityType"`
	PricePerGPU  float64           `yaml:"pricePerGPUHour"`
}

// fileSpares is a pool's spares entry.
type fileSpares struct {
	Level string `yaml:"level"`
	Count int    `yaml:"count"`
}

// Load reads and validates the fleet file at path.
func Load(path string) (*Fleet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load fleet: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes and validates a fleet file; source names it in errors.
func Parse(data []byte, source string) (*Fleet, error) {
	var ff fileFleet
	if err := decodeStrict(data, &ff); err != nil {
		return nil, yamlErrors(source, err)
	}
	var tree yaml.Node
	if err := yaml.Unmarshal(data, &tree); err != nil { // decoded once already: cannot fail
		return nil, yamlErrors(source, err)
	}
	p := &parser{source: source, tree: positions{&tree}, pools: map[string]int{}}
	f := p.fleet(&ff)
	if err := errors.Join(p.errs...); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, prefixLines(source, err)
	}
	return f, nil
}

// decodeStrict decodes the one YAML document in data into v, rejecting
// unknown fields.
func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if err == io.EOF {
			return errors.New("empty fleet file")
		}
		return err
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("line %d: a second YAML document; a fleet file holds one", extra.Line)
}

var (
	yamlLine     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	yamlNotFound = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)
)

// yamlErrors rewrites a yaml error as one "source:line: problem" line per
// problem.
func yamlErrors(source string, err error) error {
	msgs := []string{err.Error()}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	errs := make([]error, len(msgs))
	for i, msg := range msgs {
		line := 0
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		msg = strings.TrimPrefix(msg, "yaml: ")
		if m := yamlNotFound.FindStringSubmatch(msg); m != nil {
			msg = unknownField(m[1], m[2])
		} else {
			msg = yamlTypes.Replace(msg)
		}
		errs[i] = located(source, line, errors.New(msg))
	}
	return errors.Join(errs...)
}

// yamlTypes names the Go types of the fleet file's sections in yaml's
// messages ("cannot unmarshal !!map into []fleet.filePool").
var yamlTypes = strings.NewReplacer(
	"[]fleet.filePool", "a list of pools",
	"*fleet.fileSpares", "spares {level, count}",
	"fleet.fileSpares", "spares {level, count}",
	"fleet.filePool", "a pool",
	"fleet.fileFleet", "a fleet file (a mapping)",
)

// fileTypes names the fleet file's sections by their Go type, for messages.
var fileTypes = map[string]struct {
	what string
	typ  reflect.Type
}{
	reflect.TypeFor[fileFleet]().String():  {"the fleet file", reflect.TypeFor[fileFleet]()},
	reflect.TypeFor[filePool]().String():   {"a pool", reflect.TypeFor[filePool]()},
	reflect.TypeFor[fileSpares]().String(): {"spares", reflect.TypeFor[fileSpares]()},
}

// unknownField describes an unknown field of a fleet file section and lists
// the known ones.
func unknownField(field, typeName string) string {
	section, ok := fileTypes[typeName]
	if !ok {
		return fmt.Sprintf("unknown field %q", field)
	}
	known := make([]string, section.typ.NumField())
	for i := range known {
		known[i] = strings.Split(section.typ.Field(i).Tag.Get("yaml"), ",")[0]
	}
	return fmt.Sprintf("unknown field %q in %s (known: %s)", field, section.what, strings.Join(known, ", "))
}

// located prefixes err with "source:line: ", or "source: " when the line is
// unknown (0).
func located(source string, line int, err error) error {
	if line <= 0 {
		return fmt.Errorf("%s: %w", source, err)
	}
	return fmt.Errorf("%s:%d: %w", source, line, err)
}

// prefixLines prefixes every error joined in err with source.
func prefixLines(source string, err error) error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return located(source, 0, err)
	}
	var errs []error
	for _, e := range joined.Unwrap() {
		errs = append(errs, prefixLines(source, e))
	}
	return errors.Join(errs...)
}

// positions finds lines in the YAML tree of a fleet file.
type positions struct{ root *yaml.Node }

// line returns the line of the entry at path (mapping keys as strings,
// sequence indices as ints): the line of its key for a mapping entry. When
// the path does not exist it returns the line of the deepest ancestor that
// does, and 0 when there is no tree.
func (p positions) line(path ...any) int {
	n := p.root
	if n == nil {
		return 0
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, step := range path {
		next, at := child(n, step)
		if next == nil {
			break
		}
		n, line = next, at
	}
	return line
}

// child returns the entry of n at a mapping key or sequence index, and the
// line of its key or item.
func child(n *yaml.Node, step any) (*yaml.Node, int) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch s := step.(type) {
	case string:
		if n.Kind != yaml.MappingNode {
			return nil, 0
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == s {
				return n.Content[i+1], n.Content[i].Line
			}
		}
	case int:
		if n.Kind == yaml.SequenceNode && s >= 0 && s < len(n.Content) {
			return n.Content[s], n.Content[s].Line
		}
	}
	return nil, 0
}

// parser turns a decoded fleet file into a fleet, collecting errors.
type parser struct {
	source string
	tree   positions
	levels []string
	pools  map[string]int // pool name -> its line
	errs   []error
}

// errorf records an error at the line of path.
func (p *parser) errorf(path []any, format string, args ...any) {
	p.errs = append(p.errs, located(p.source, p.tree.line(path...), fmt.Errorf(format, args...)))
}

// fleet checks the levels and pools and makes the nodes; it returns nil
// after recording errors.
func (p *parser) fleet(ff *fileFleet) *Fleet {
	if err := (&Fleet{Levels: ff.Levels}).validateLevels(); err != nil {
		p.errorf([]any{"levels"}, "%w", err)
		return nil
	}
	p.levels = ff.Levels
	if ff.NVLinkDomain != "" && !slices.Contains(ff.Levels, ff.NVLinkDomain) {
		p.errorf([]any{"nvlinkDomain"}, "nvlinkDomain %q is not one of the levels (%s)",
			ff.NVLinkDomain, strings.Join(ff.Levels, ", "))
	}
	if len(ff.Pools) == 0 {
		p.errorf([]any{"pools"}, "no pools")
	}
	specs := make([]poolSpec, 0, len(ff.Pools))
	for i := range ff.Pools {
		r := &poolReader{parser: p, index: i, fp: &ff.Pools[i]}
		if spec, ok := r.spec(); ok {
			specs = append(specs, spec)
		}
	}
	if len(p.errs) > 0 {
		return nil
	}
	return &Fleet{Levels: ff.Levels, NVLinkDomain: ff.NVLinkDomain, Nodes: expand(ff.Levels, specs)}
}

// poolReader resolves one pool entry, recording errors at its lines.
type poolReader struct {
	*parser
	index  int
	fp     *filePool
	failed bool
}

// fail records an error about the pool at the line of path inside its entry.
func (r *poolReader) fail(path []any, format string, args ...any) {
	name := r.fp.Name
	if name == "" {
		name = "#" + strconv.Itoa(r.index+1)
	}
	full := append([]any{"pools", r.index}, path...)
	r.errorf(full, "pool %q: "+format, append([]any{name}, args...)...)
	r.failed = true
}

// spec checks the pool entry and resolves it; ok is false after errors.
func (r *poolReader) spec() (s poolSpec, ok bool) {
	r.checkName()
	r.checkCounts()
	s = poolSpec{proto: r.node(), nodes: r.fp.Nodes}
	if r.failed { // the placement checks below need a sound count of nodes
		return s, false
	}
	r.placement(&s)
	r.spares(&s)
	s.health = r.health()
	return s, !r.failed
}

func (r *poolReader) checkName() {
	if r.fp.Name == "" {
		r.fail(nil, "no name")
		return
	}
	if line, dup := r.pools[r.fp.Name]; dup {
		r.fail([]any{"name"}, "duplicate pool name (first at line %d)", line)
		return
	}
	r.pools[r.fp.Name] = r.tree.line("pools", r.index, "name")
}

func (r *poolReader) checkCounts() {
	for _, c := range []struct {
		key   string
		value int
		least int
	}{{"nodes", r.fp.Nodes, 1}, {"gpusPerNode", r.fp.GPUsPerNode, 0}, {"timeSlices", r.fp.TimeSlices, 0}} {
		if c.value < c.least {
			r.fail([]any{c.key}, "%s %d, want at least %d", c.key, c.value, c.least)
		}
	}
}

// node makes the template of the pool's nodes.
func (r *poolReader) node() Node {
	fp := r.fp
	n := Node{
		Pool:       fp.Name,
		Labels:     fp.Labels,
		Taints:     fp.Taints,
		GPUs:       fp.GPUsPerNode,
		MIG:        MIGMode(fp.MIG),
		MIGLayout:  fp.MIGLayout,
		TimeSlices: fp.TimeSlices,
	}
	if n.PricePerGPUHour = fp.PricePerGPU; n.PricePerGPUHour < 0 {
		r.fail([]any{"pricePerGPUHour"}, "pricePerGPUHour %g, want a price of at least 0", n.PricePerGPUHour)
	}
	r.purposeAndCapacity(&n)
	var err error
	if n.CPUMilli, err = quantity.CPU(fp.CPU); err != nil {
		r.fail([]any{"cpu"}, "cpu: %w", err)
	}
	if n.MemoryMiB, err = quantity.Memory(fp.Memory); err != nil {
		r.fail([]any{"memory"}, "memory: %w", err)
	}
	if fp.GPUsPerNode > 0 {
		r.gpus(&n)
	} else {
		r.checkCPUOnly()
	}
	return n
}

// purposeAndCapacity labels the pool's nodes with its purpose and
// capacity type; spot nodes are tainted so that only work that tolerates
// interruption (not serving) lands there.
func (r *poolReader) purposeAndCapacity(n *Node) {
	fp := r.fp
	if fp.Purpose == "" && fp.CapacityType == "" {
		return
	}
	n.Labels = maps.Clone(fp.Labels)
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	if fp.Purpose != "" {
		if !slices.Contains(Purposes, fp.Purpose) {
			r.fail([]any{"purpose"}, "purpose %q, want one of %s", fp.Purpose, strings.Join(Purposes, ", "))
		}
		n.Labels[PurposeLabel] = fp.Purpose
	}
	if fp.CapacityType != "" {
		if !slices.Contains(CapacityTypes, fp.CapacityType) {
			r.fail([]any{"capacityType"}, "capacityType %q, want one of %s", fp.CapacityType, strings.Join(CapacityTypes, ", "))
		}
		n.Labels[CapacityTypeLabel] = fp.CapacityType
		if fp.CapacityType == CapacitySpot && !slices.Contains(fp.Taints, SpotTaint) {
			n.Taints = append(slices.Clone(fp.Taints), SpotTaint)
		}
	}
}

// checkCPUOnly rejects GPU fields in a pool without GPUs.
func (r *poolReader) checkCPUOnly() {
	fp := r.fp
	for _, f := range []struct {
		key string
		set bool
	}{
		{"gpuModel", fp.GPUModel != ""}, {"nodeTopology", fp.NodeTopology != ""},
		{"nvlink", fp.NVLink != nil}, {"pcie", fp.PCIe != nil}, {"numa", fp.NUMA != nil},
		{"mig", fp.MIG != ""}, {"migLayout", fp.MIGLayout != nil}, {"timeSlices", fp.TimeSlices > 0},
	} {
		if f.set {
			r.fail([]any{f.key}, "%s needs gpusPerNode > 0", f.key)
			return
		}
	}
}

// gpus fills in the GPU model, islands and MIG of a pool with GPUs.
func (r *poolReader) gpus(n *Node) {
	if r.fp.GPUModel == "" {
		r.fail([]any{"gpusPerNode"}, "%d GPUs per node and no gpuModel", n.GPUs)
		return
	}
	model, err := gpu.Lookup(r.fp.GPUModel)
	if err != nil {
		r.fail([]any{"gpuModel"}, "%w", err)
		return
	}
	n.GPUModel = model.Name
	r.islands(n)
	if err := n.validateGPUs(); err != nil {
		key := "mig"
		if r.fp.MIG == "" {
			key = "migLayout"
		}
		r.fail([]any{key}, "%w", err)
	}
}

// islands sets the node's islands from the preset and the explicit lists.
func (r *poolReader) islands(n *Node) {
	nvlink, pcie, numa, err := presetIslands(r.fp.NodeTopology, n.GPUs)
	if err != nil {
		r.fail([]any{"nodeTopology"}, "%w", err)
	}
	for _, k := range []struct {
		key      string
		explicit [][]int
		preset   [][]int
		dst      *[][]int
	}{
		{"nvlink", r.fp.NVLink, nvlink, &n.NVLink},
		{"pcie", r.fp.PCIe, pcie, &n.PCIe},
		{"numa", r.fp.NUMA, numa, &n.NUMA},
	} {
		*k.dst = k.preset
		if k.explicit != nil {
			*k.dst = k.explicit
		}
		if err := checkIslands(*k.dst, n.GPUs); err != nil {
			r.fail([]any{k.key}, "%s islands: %w", k.key, err)
		}
	}
}

// levelIndex returns the index of a level that the pool names at path, or
// records an error naming the levels.
func (r *poolReader) levelIndex(level string, path []any, field string) (int, bool) {
	if i := slices.Index(r.levels, level); i >= 0 {
		return i, true
	}
	r.fail(path, "unknown level %q in %s (levels: %s)", level, field, strings.Join(r.levels, ", "))
	return 0, false
}

// placement reads perDomain and at into s.fanout and s.at.
func (r *poolReader) placement(s *poolSpec) {
	s.fanout = make([]int, len(r.levels))
	s.at = make([]string, len(r.levels))
	for _, level := range slices.Sorted(maps.Keys(r.fp.PerDomain)) {
		path := []any{"perDomain", level}
		l, ok := r.levelIndex(level, path, "perDomain")
		if n := r.fp.PerDomain[level]; n < 1 {
			r.fail(path, "perDomain %s: %d, want at least 1", level, n)
		} else if ok {
			s.fanout[l] = n
		}
	}
	for _, level := range slices.Sorted(maps.Keys(r.fp.At)) {
		path := []any{"at", level}
		l, ok := r.levelIndex(level, path, "at")
		if name := r.fp.At[level]; name == "" {
			r.fail(path, "at %s: empty domain name", level)
		} else if ok {
			s.at[l] = name
		}
	}
	if !r.failed {
		r.checkFanout(s)
		r.checkAt(s)
	}
}

// checkFanout rejects a fan-out at a level when a level inside it has none
// (one domain for the whole pool), which would make it meaningless.
func (r *poolReader) checkFanout(s *poolSpec) {
	for l := range s.fanout {
		if s.fanout[l] == 0 {
			continue
		}
		for in := l + 1; in < len(s.fanout); in++ {
			if s.fanout[in] == 0 {
				r.fail([]any{"perDomain", r.levels[l]},
					"perDomain %s needs perDomain %s too (without it the pool has one %s)",
					r.levels[l], r.levels[in], r.levels[in])
				return
			}
		}
	}
}

// checkAt rejects a fixed domain name at a level where the pool spreads over
// several domains.
func (r *poolReader) checkAt(s *poolSpec) {
	sizes := s.domainSizes()
	for l, name := range s.at {
		if name == "" {
			continue
		}
		if count := domainCount(s.nodes, sizes[l]); count > 1 {
			r.fail([]any{"at", r.levels[l]}, "at %s: %q names one %s, but perDomain spreads the %d nodes over %d",
				r.levels[l], name, r.levels[l], s.nodes, count)
		}
	}
}

// spares reads the spares entry into s.spares.
func (r *poolReader) spares(s *poolSpec) {
	s.spares = spareSpec{level: -1}
	sp := r.fp.Spares
	if sp == nil || r.failed {
		return
	}
	l, ok := r.levelIndex(sp.Level, []any{"spares", "level"}, "spares")
	if !ok {
		return
	}
	switch smallest := s.smallestDomain(l); {
	case sp.Count < 0:
		r.fail([]any{"spares", "count"}, "spares count %d, want at least 0", sp.Count)
	case sp.Count >= smallest:
		r.fail([]any{"spares", "count"}, "spares count %d leaves no working node in a %s of %d nodes",
			sp.Count, sp.Level, smallest)
	default:
		s.spares = spareSpec{level: l, count: sp.Count}
	}
}

// health reads the per-node health entries.
func (r *poolReader) health() map[string]Health {
	if len(r.fp.Health) == 0 {
		return nil
	}
	out := make(map[string]Health, len(r.fp.Health))
	for _, name := range slices.Sorted(maps.Keys(r.fp.Health)) {
		path := []any{"health", name}
		h := Health(r.fp.Health[name])
		switch {
		case !r.hasNode(name):
			r.fail(path, "health: no node %q in the pool (nodes %s to %s)",
				name, nodeName(r.fp.Name, 0), nodeName(r.fp.Name, r.fp.Nodes-1))
		case h != Healthy && h != Unhealthy && h != Cordoned:
			r.fail(path, "health of %s: %q, want healthy, unhealthy or cordoned", name, h)
		default:
			out[name] = h
		}
	}
	return out
}

// hasNode reports whether name is the name of one of the pool's nodes.
func (r *poolReader) hasNode(name string) bool {
	digits, ok := strings.CutPrefix(name, r.fp.Name+"-")
	if !ok {
		return false
	}
	i, err := strconv.Atoi(digits)
	return err == nil && i >= 0 && i < r.fp.Nodes && nodeName(r.fp.Name, i) == name
}

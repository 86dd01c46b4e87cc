package gpu

import (
	"fmt"
	"slices"
	"strings"
)

// Profile is one MIG instance shape of a model.
type Profile struct {
	Name      string // "1g.10gb"
	Compute   int    // compute slices
	Slices    int    // memory slices occupied
	Starts    []int  // valid first memory slice, ascending
	MemoryMiB int64  // the GB figure of the name times 1024 (approximate)
}

// Model is one GPU model corral knows. Models come from the catalog and are
// shared: callers must not modify them.
type Model struct {
	Name          string
	Vendor        string // "nvidia" or "amd"
	MemoryMiB     int64
	MIG           bool
	MemorySlices  int       // 8, or 4 for A30; 0 when !MIG
	ComputeSlices int       // 7, or 4 for A30; 0 when !MIG
	Profiles      []Profile // smallest first; nil when !MIG
}

// profile builds a profile named "<compute>g.<gb>gb". Its memory is gb*1024
// MiB: NVIDIA's profile names round the real size, so this is approximate.
func profile(compute, slices, gb int, starts ...int) Profile {
	return Profile{
		Name:      fmt.Sprintf("%dg.%dgb", compute, gb),
		Compute:   compute,
		Slices:    slices,
		Starts:    starts,
		MemoryMiB: int64(gb) * 1024,
	}
}

// eightSlice gives the profiles of the A100, H100, H200 and B200, which
// share one set of slot rules and differ only in memory: small is the
// 1g profile's GB, double the 1g/2g two-slice GB, quad the 3g/4g GB and
// whole the 7g GB.
func eightSlice(small, double, quad, whole int) []Profile {
	return []Profile{
		profile(1, 1, small, 0, 1, 2, 3, 4, 5, 6),
		profile(1, 2, double, 0, 2, 4, 6),
		profile(2, 2, double, 0, 2, 4),
		profile(3, 4, quad, 0, 4),
		profile(4, 4, quad, 0),
		profile(7, 8, whole, 0),
	}
}

func migModel(name string, gib int64, memSlices, computeSlices int, profiles []Profile) *Model {
	return &Model{Name: name, Vendor: NVIDIA, MemoryMiB: gib * 1024, MIG: true,
		MemorySlices: memSlices, ComputeSlices: computeSlices, Profiles: profiles}
}

func plainModel(name string, gib int64) *Model {
	return &Model{Name: name, Vendor: NVIDIA, MemoryMiB: gib * 1024}
}

// amdModel is an AMD Instinct accelerator. AMD partitions its GPUs
// (compute and memory partition modes) in a way that is not MIG; corral
// schedules them whole.
func amdModel(name string, gib int64) *Model {
	return &Model{Name: name, Vendor: AMD, MemoryMiB: gib * 1024}
}

// The vendors of the catalog's models.
const (
	NVIDIA = "nvidia"
	AMD    = "amd"
)

// ResourceName is the extended resource a device plugin advertises the
// model's GPUs as: nvidia.com/gpu (NVIDIA's k8s-device-plugin), amd.com/gpu
// (ROCm's k8s-device-plugin).
func (m *Model) ResourceName() string {
	if m.Vendor == AMD {
		return "amd.com/gpu"
	}
	return "nvidia.com/gpu"
}

// catalog is every model, sorted by name in init.
var catalog = []*Model{
	migModel("A100-40GB", 40, 8, 7, eightSlice(5, 10, 20, 40)),
	migModel("A100-80GB", 80, 8, 7, eightSlice(10, 20, 40, 80)),
	migModel("H100-80GB", 80, 8, 7, eightSlice(10, 20, 40, 80)),
	migModel("H200-141GB", 141, 8, 7, eightSlice(18, 35, 71, 141)),
	migModel("B200-180GB", 180, 8, 7, eightSlice(23, 45, 90, 180)),
	// Memory and MIG profiles of the models below: NVIDIA's MIG user guide,
	// "Supported GPUs" and "Supported MIG Profiles"
	// (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/), which lists
	// the H100 of 94 GB (the H100 NVL, a PCIe board), the H100 of GH200
	// (96 GB), the H200 NVL (141 GB) and GB200 (186 GB) with the same
	// slot rules as the A100 and their profile sizes in GB.
	migModel("H100-NVL", 94, 8, 7, eightSlice(12, 24, 47, 94)),
	migModel("GH200-96GB", 96, 8, 7, eightSlice(12, 24, 48, 96)),
	migModel("H200-NVL", 141, 8, 7, eightSlice(18, 35, 71, 141)),
	migModel("GB200-186GB", 186, 8, 7, eightSlice(23, 47, 93, 186)),
	migModel("A30", 24, 4, 4, []Profile{
		profile(1, 1, 6, 0, 1, 2, 3),
		profile(2, 2, 12, 0, 2),
		profile(4, 4, 24, 0),
	}),
	plainModel("L4", 24),
	plainModel("L40S", 48),
	plainModel("A10G", 24),
	plainModel("T4", 16),
	plainModel("V100-16GB", 16),
	plainModel("V100-32GB", 32),
	plainModel("P100", 16),
	plainModel("A10", 24),
	// Memory from NVIDIA's data sheets (https://www.nvidia.com/en-us/data-center/l40/,
	// https://www.nvidia.com/en-us/design-visualization/rtx-6000/): no MIG.
	plainModel("L40", 48),
	plainModel("RTX-6000-Ada", 48),
	// AMD Instinct: memory from AMD's product pages
	// (https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html,
	// https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html).
	amdModel("MI300X", 192),
	amdModel("MI325X", 256),
	// G2 and G3 are GPU models of Alibaba's own in the openb traces; their
	// memory is not published, so memory-fraction requests cannot use them.
	plainModel("G2", 0),
	plainModel("G3", 0),
}

// aliases maps short names to catalog names.
var aliases = map[string]string{
	"A100":                    "A100-80GB",
	"B200":                    "B200-180GB",
	"H100":                    "H100-80GB",
	"H200":                    "H200-141GB",
	"V100":                    "V100-32GB",
	"H100-94GB":               "H100-NVL",
	"GH200":                   "GH200-96GB",
	"GH200-480GB":             "GH200-96GB", // GPU feature discovery's product name counts the CPU's memory too
	"GB200":                   "GB200-186GB",
	"RTX-6000-ADA-GENERATION": "RTX-6000-Ada",
	// AMD's device plugin labels products as "AMD_Instinct_MI300X".
	"AMD-INSTINCT-MI300X": "MI300X",
	"AMD-INSTINCT-MI325X": "MI325X",
	"INSTINCT-MI300X":     "MI300X",
	"INSTINCT-MI325X":     "MI325X",
	// The openb traces' names.
	"V100M16": "V100-16GB",
	"V100M32": "V100-32GB",
}

// byName maps upper-case catalog names and aliases to models.
var byName = map[string]*Model{}

func init() {
	slices.SortFunc(catalog, func(a, b *Model) int { return strings.Compare(a.Name, b.Name) })
	for _, m := range catalog {
		byName[strings.ToUpper(m.Name)] = m
	}
	for alias, name := range aliases {
		byName[alias] = byName[strings.ToUpper(name)]
	}
}

// Models returns every model in the catalog, sorted by name.
func Models() []*Model {
	return slices.Clone(catalog)
}

// Lookup finds a model by catalog name or alias, ignoring case. It also
// accepts GPU feature discovery product strings such as
// "NVIDIA-H100-80GB-HBM3" or "Tesla-V100-SXM2-16GB": a leading "NVIDIA" or
// "Tesla" and form-factor words (SXM, PCIe, HBM3...) are dropped before
// looking up what is left.
//
// Models added at run time by Register are found after the catalog's.
func Lookup(name string) (*Model, error) {
	if m, ok := byName[normalize(name)]; ok {
		return m, nil
	}
	if m, ok := lookupRegistered(normalize(name)); ok {
		return m, nil
	}
	return nil, fmt.Errorf("gpu: unknown GPU model %q (known: %s; aliases: %s)",
		name, strings.Join(modelNames(), ", "), strings.Join(aliasNames(), ", "))
}

// formFactors are product-string words that do not tell models apart.
var formFactors = map[string]bool{
	"SXM": true, "SXM2": true, "SXM4": true, "SXM5": true,
	"PCIE": true, "HBM3": true, "HBM3E": true,
}

// normalize upper-cases a model name, joins its words with "-", and drops a
// vendor prefix and form-factor words, so "NVIDIA A100-SXM4-40GB" becomes
// "A100-40GB".
func normalize(name string) string {
	words := strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool {
		return r == '-' || r == ' ' || r == '_'
	})
	if len(words) > 1 && (words[0] == "NVIDIA" || words[0] == "TESLA") {
		words = words[1:]
	}
	words = slices.DeleteFunc(words, func(w string) bool { return formFactors[w] })
	return strings.Join(words, "-")
}

func modelNames() []string {
	names := make([]string, len(catalog))
	for i, m := range catalog {
		names[i] = m.Name
	}
	return names
}

func aliasNames() []string {
	names := make([]string, 0, len(aliases))
	for alias, name := range aliases {
		names = append(names, alias+"="+name)
	}
	slices.Sort(names)
	return names
}

// ProfileIndex returns the index in m.Profiles of the named profile,
// ignoring case.
func (m *Model) ProfileIndex(name string) (int, error) {
	if !m.MIG {
		return -1, fmt.Errorf("gpu: %s does not support MIG, so has no profile %q", m.Name, name)
	}
	for i, p := range m.Profiles {
		if strings.EqualFold(p.Name, name) {
			return i, nil
		}
	}
	return -1, fmt.Errorf("gpu: %s has no MIG profile %q (valid: %s)", m.Name, name, strings.Join(m.profileNames(), ", "))
}

// ProfileMilli is the part of one GPU an instance of the named profile
// counts for in quotas and accounting, in thousandths: its share of the
// GPU's compute slices (a 1g instance of seven is 142), so that a GPU cut
// into instances counts about one GPU, whatever the cut. Every face
// charges MIG instances with it.
func (m *Model) ProfileMilli(name string) (int64, error) {
	i, err := m.ProfileIndex(name)
	if err != nil {
		return 0, err
	}
	return 1000 * int64(m.Profiles[i].Compute) / int64(m.ComputeSlices), nil
}

// LeastProfileMilli is the least ProfileMilli of the named profile over
// the catalog's models that have it: what an instance surely counts for
// before it is known on which model it lands; 0 when none has it.
func LeastProfileMilli(name string) int64 {
	var least int64
	for _, m := range Models() {
		if milli, err := m.ProfileMilli(name); err == nil && (least == 0 || milli < least) {
			least = milli
		}
	}
	return least
}

func (m *Model) profileNames() []string {
	names := make([]string, len(m.Profiles))
	for i, p := range m.Profiles {
		names[i] = p.Name
	}
	return names
}

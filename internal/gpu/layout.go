package gpu

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Instance is one MIG instance on a GPU.
type Instance struct {
	Profile int  // index into Model.Profiles
	Start   int  // first memory slice
	Busy    bool // running work on it
}

// Layout is the MIG instances of one GPU. Methods other than Validate and
// String assume a valid layout; check hand-built ones with Validate. A
// Layout value shares its Instances with copies of it: use Clone for an
// independent one.
type Layout struct {
	Model     *Model
	Instances []Instance // kept sorted by Start
}

// NewLayout places the named profiles in order, each idle at its lowest
// valid free start.
func NewLayout(m *Model, profiles ...string) (Layout, error) {
	l := Layout{Model: m}
	if err := l.checkModel(); err != nil {
		return Layout{}, fmt.Errorf("gpu: new layout: %w", err)
	}
	for _, name := range profiles {
		p, err := m.ProfileIndex(name)
		if err != nil {
			return Layout{}, fmt.Errorf("new layout: %w", err)
		}
		start, ok := l.lowestFree(p)
		if !ok {
			return Layout{}, fmt.Errorf("gpu: new layout: no room for %s on %s after %s", name, m.Name, l)
		}
		l.insert(Instance{Profile: p, Start: start})
	}
	return l, nil
}

// ParseLayout reads a layout written by String, e.g.
// "3g.40gb@0 2g.20gb@4* 1g.10gb@6", and validates it. Instances may come in
// any order; "" and "(empty)" are the empty layout.
func ParseLayout(m *Model, s string) (Layout, error) {
	l, err := parseLayout(m, s)
	if err == nil {
		slices.SortFunc(l.Instances, byStart)
		err = l.Validate()
	}
	if err != nil {
		return Layout{}, fmt.Errorf("gpu: parse layout %q: %w", s, err)
	}
	return l, nil
}

// parseLayout reads instances in the order given, without validating.
func parseLayout(m *Model, s string) (Layout, error) {
	l := Layout{Model: m}
	if err := l.checkModel(); err != nil {
		return Layout{}, err
	}
	for _, field := range strings.Fields(s) {
		if field == emptyLayout {
			continue
		}
		in, err := parseInstance(m, field)
		if err != nil {
			return Layout{}, err
		}
		l.Instances = append(l.Instances, in)
	}
	return l, nil
}

func parseInstance(m *Model, field string) (Instance, error) {
	rest, busy := strings.CutSuffix(field, "*")
	name, start, ok := strings.Cut(rest, "@")
	if !ok {
		return Instance{}, fmt.Errorf("instance %q is not profile@start", field)
	}
	p, err := m.ProfileIndex(name)
	if err != nil {
		return Instance{}, err
	}
	s, err := strconv.Atoi(start)
	if err != nil {
		return Instance{}, fmt.Errorf("instance %q: bad start: %w", field, err)
	}
	return Instance{Profile: p, Start: s, Busy: busy}, nil
}

// Validate checks that the layout has a MIG model, that every instance has a
// profile of it and a valid start for that profile, that no two instances
// share a memory slice, that instances are sorted by start, and that their
// compute slices fit in the GPU's.
func (l Layout) Validate() error {
	if err := l.checkModel(); err != nil {
		return fmt.Errorf("gpu: invalid layout: %w", err)
	}
	if err := l.checkInstances(); err != nil {
		return fmt.Errorf("gpu: invalid %s layout %q: %w", l.Model.Name, l, err)
	}
	return nil
}

func (l Layout) checkModel() error {
	switch {
	case l.Model == nil:
		return fmt.Errorf("no GPU model")
	case !l.Model.MIG:
		return fmt.Errorf("%s does not support MIG", l.Model.Name)
	}
	return nil
}

func (l Layout) checkInstances() error {
	var held uint32
	compute := 0
	for i, in := range l.Instances {
		if !l.hasProfile(in.Profile) {
			return fmt.Errorf("instance %d has no profile %d", i, in.Profile)
		}
		pr := l.Model.Profiles[in.Profile]
		if !slices.Contains(pr.Starts, in.Start) {
			return fmt.Errorf("%s cannot start at memory slice %d (valid starts %v)", pr.Name, in.Start, pr.Starts)
		}
		mask := span(pr, in.Start)
		if held&mask != 0 {
			return fmt.Errorf("%s@%d overlaps another instance", pr.Name, in.Start)
		}
		held |= mask
		if i > 0 && in.Start < l.Instances[i-1].Start {
			return fmt.Errorf("instances are not sorted by start")
		}
		compute += pr.Compute
	}
	if compute > l.Model.ComputeSlices {
		return fmt.Errorf("instances use %d compute slices, more than the %d there are", compute, l.Model.ComputeSlices)
	}
	return nil
}

// Clone returns a copy of l that shares nothing with it but the model.
func (l Layout) Clone() Layout {
	return Layout{Model: l.Model, Instances: slices.Clone(l.Instances)}
}

const emptyLayout = "(empty)"

// String lists the instances as profile@start, a "*" marking busy ones,
// e.g. "3g.40gb@0 2g.20gb@4* 1g.10gb@6"; "(empty)" when there are none.
func (l Layout) String() string {
	if len(l.Instances) == 0 {
		return emptyLayout
	}
	parts := make([]string, len(l.Instances))
	for i, in := range l.Instances {
		parts[i] = l.profileName(in.Profile) + "@" + strconv.Itoa(in.Start)
		if in.Busy {
			parts[i] += "*"
		}
	}
	return strings.Join(parts, " ")
}

// profileName names profile p, or "#p" when the layout has no such profile.
func (l Layout) profileName(p int) string {
	if l.hasProfile(p) {
		return l.Model.Profiles[p].Name
	}
	return "#" + strconv.Itoa(p)
}

func (l Layout) hasProfile(p int) bool {
	return l.Model != nil && p >= 0 && p < len(l.Model.Profiles)
}

// Idle reports whether no instance is busy: a dynamically reconfigured GPU
// in this state can be turned back into a whole GPU.
func (l Layout) Idle() bool {
	return !slices.ContainsFunc(l.Instances, func(in Instance) bool { return in.Busy })
}

// BusySlices reports how many memory slices busy instances occupy.
func (l Layout) BusySlices() int {
	return bits.OnesCount32(usageOf(l.Model, l.Instances).busy)
}

// FreeCompute reports how many compute slices no instance uses.
func (l Layout) FreeCompute() int {
	return l.Model.ComputeSlices - usageOf(l.Model, l.Instances).compute
}

// Release marks the busy instance that starts at memory slice start idle.
func (l *Layout) Release(start int) error {
	i := l.find(start)
	switch {
	case i < 0:
		return fmt.Errorf("gpu: release slice %d: no instance starts there in %q", start, l)
	case !l.Instances[i].Busy:
		return fmt.Errorf("gpu: release slice %d: %s@%d is not busy", start, l.profileName(l.Instances[i].Profile), start)
	}
	l.Instances[i].Busy = false
	return nil
}

// find returns the index of the instance starting at start, or -1.
func (l Layout) find(start int) int {
	return slices.IndexFunc(l.Instances, func(in Instance) bool { return in.Start == start })
}

// insert adds an instance, keeping Instances sorted by start.
func (l *Layout) insert(in Instance) {
	l.Instances = append(l.Instances, in)
	slices.SortStableFunc(l.Instances, byStart)
}

func byStart(a, b Instance) int { return a.Start - b.Start }

// lowestFree returns the lowest valid start at which a new instance of p
// fits beside l's instances.
func (l Layout) lowestFree(p int) (int, bool) {
	u := usageOf(l.Model, l.Instances)
	for _, s := range l.Model.Profiles[p].Starts {
		if u.fits(l.Model, p, s) {
			return s, true
		}
	}
	return -1, false
}

// usage is what a set of instances holds on a GPU.
type usage struct {
	held, busy           uint32 // memory slices held by any instance, by busy ones
	compute, busyCompute int    // compute slices used by any instance, by busy ones
}

func usageOf(m *Model, ins []Instance) usage {
	var u usage
	for _, in := range ins {
		u.add(m, in)
	}
	return u
}

func (u *usage) add(m *Model, in Instance) {
	pr := m.Profiles[in.Profile]
	mask := span(pr, in.Start)
	u.held |= mask
	u.compute += pr.Compute
	if in.Busy {
		u.busy |= mask
		u.busyCompute += pr.Compute
	}
}

// fits reports whether a new instance of p at start (a valid start) fits
// beside the held slices and used compute.
func (u usage) fits(m *Model, p, start int) bool {
	pr := m.Profiles[p]
	return u.held&span(pr, start) == 0 && u.compute+pr.Compute <= m.ComputeSlices
}

// span is the mask of the memory slices an instance of pr at start holds.
func span(pr Profile, start int) uint32 {
	return (1<<pr.Slices - 1) << start
}

// Hosts returns, as a bit mask over the model's profiles, the profiles of
// which one more task could be hosted now: an idle instance of the
// profile, or (dynamic) room for one once every idle instance is
// destroyed. It equals "Plan(p, dynamic) succeeds" for every p, without
// planning, and allocates nothing.
func (l Layout) Hosts(dynamic bool) uint32 {
	var mask, busy uint32
	busyCompute := 0
	for _, in := range l.Instances {
		if !in.Busy {
			mask |= 1 << in.Profile
			continue
		}
		busy |= span(l.Model.Profiles[in.Profile], in.Start)
		busyCompute += l.Model.Profiles[in.Profile].Compute
	}
	if !dynamic {
		return mask
	}
	for p, pr := range l.Model.Profiles {
		if mask&(1<<p) != 0 || busyCompute+pr.Compute > l.Model.ComputeSlices {
			continue
		}
		for _, s := range pr.Starts {
			if busy&span(pr, s) == 0 {
				mask |= 1 << p
				break
			}
		}
	}
	return mask
}

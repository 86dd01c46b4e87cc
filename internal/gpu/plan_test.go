package gpu

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// change writes a Change compactly for tables: "use 2", "create 4",
// "create 4 delete [0 2]", or "none" when Plan says no.
func change(c Change, ok bool) string {
	switch {
	case !ok:
		return "none"
	case c.Use >= 0:
		return fmt.Sprintf("use %d", c.Use)
	case len(c.Delete) > 0:
		return fmt.Sprintf("create %d delete %v", c.Create, c.Delete)
	}
	return fmt.Sprintf("create %d", c.Create)
}

func TestPlan(t *testing.T) {
	h100, a30 := mustLookup(t, "H100"), mustLookup(t, "A30")
	tests := []struct {
		why     string
		model   *Model
		layout  string
		profile string
		dynamic bool
		want    string
	}{
		{"static uses the idle instance of the profile", h100, "3g.40gb@0* 3g.40gb@4", "3g.40gb", false, "use 1"},
		{"static never creates", h100, "", "1g.10gb", false, "none"},
		{"static never replaces an idle instance of another profile", h100, "2g.20gb@0 3g.40gb@4*", "1g.10gb", false, "none"},
		{"1g goes to 6, keeping 0-3 for a 4g", h100, "", "1g.10gb", true, "create 6"},
		{"2g goes to 4, keeping 0-3 for a 4g", h100, "", "2g.20gb", true, "create 4"},
		{"3g goes to 4, keeping 0-3 for a 4g", h100, "", "3g.40gb", true, "create 4"},
		{"4g has one start", h100, "", "4g.40gb", true, "create 0"},
		{"7g has one start", h100, "", "7g.80gb", true, "create 0"},
		{"1g at 4 or 5 leave the same room: lowest start", h100, "1g.10gb@6*", "1g.10gb", true, "create 4"},
		{"A30 1g: every start leaves the same room", a30, "", "1g.6gb", true, "create 0"},
		// @0 keeps the 3g start 4 and @6 keeps more 1g.10gb starts (5 to 4):
		// larger profiles count first.
		{"keep the larger profile placeable", h100, "1g.10gb@3*", "1g.20gb", true, "create 0"},
		// @2 keeps 3g@4 free now; @6 would keep 4g@0 reachable once the
		// idle 2g is destroyed: room now counts before room later.
		{"room now before room after reconfiguration", h100, "2g.20gb@0", "1g.10gb", true, "create 2"},
		{"an idle instance beats free slices", h100, "1g.10gb@0 1g.10gb@6*", "1g.10gb", true, "use 0"},
		// Using 1g@0 leaves 4-7 reachable for a 3g once 1g@5 is destroyed;
		// using 1g@5 would leave no 3g start clear of busy instances.
		{"use the idle instance that keeps reconfiguration room", h100,
			"1g.10gb@0 1g.10gb@1* 1g.10gb@5", "1g.10gb", true, "use 0"},
		{"same choice when static", h100, "1g.10gb@0 1g.10gb@1* 1g.10gb@5", "1g.10gb", false, "use 0"},
		{"free slices beat destroying", h100, "3g.40gb@0", "1g.10gb", true, "create 6"},
		{"4g only starts at 0: destroy the idle 3g there", h100, "3g.40gb@0 3g.40gb@4*", "4g.40gb", true,
			"create 0 delete [0]"},
		// 2g@2 would need both 1g destroyed, 2g@4 only the 3g.
		{"destroy the fewest instances, not the smallest", h100,
			"2g.20gb@0* 1g.10gb@2 1g.10gb@3 3g.40gb@4", "2g.20gb", true, "create 4 delete [4]"},
		// Any one 1g.20gb (but @6) makes room; 2g@4 keeps 0-3 for a 4g later.
		{"among equal destructions keep room", h100,
			"1g.20gb@0 1g.20gb@2 1g.20gb@4 1g.20gb@6", "2g.20gb", true, "create 4 delete [4]"},
		{"the whole GPU needs every idle instance gone", h100,
			"1g.20gb@0 1g.20gb@2 1g.20gb@4 1g.20gb@6", "7g.80gb", true, "create 0 delete [0 2 4 6]"},
		{"a busy whole GPU blocks everything", h100, "7g.80gb@0*", "1g.10gb", true, "none"},
		{"busy halves block a 1g", h100, "3g.40gb@0* 3g.40gb@4*", "1g.10gb", true, "none"},
		{"a busy 1g blocks the 4g", h100, "1g.10gb@3*", "4g.40gb", true, "none"},
		// tight: slices 1-3 are free, but compute (1+2 of 3 used) is not,
		// so the idle 2g that is not in the way must go.
		{"destroy for compute", tight, "1g.1gb@0* 2g.2gb@4", "1g.1gb", true, "create 1 delete [4]"},
	}
	for _, tt := range tests {
		l := mustParse(t, tt.model, tt.layout)
		c, ok := l.Plan(mustProfile(t, tt.model, tt.profile), tt.dynamic)
		if got := change(c, ok); got != tt.want {
			t.Errorf("%s: Plan(%s, dynamic=%v) on %q = %s, want %s", tt.why, tt.profile, tt.dynamic, tt.layout, got, tt.want)
		}
	}
}

func TestPlanImpossibleInputs(t *testing.T) {
	l := mustParse(t, mustLookup(t, "H100"), "")
	for _, p := range []int{-1, 6} {
		if c, ok := l.Plan(p, true); ok {
			t.Errorf("Plan(%d) = %+v for a profile H100 lacks", p, c)
		}
		if n := l.Capacity(p, true); n != 0 {
			t.Errorf("Capacity(%d) = %d for a profile H100 lacks", p, n)
		}
	}
	if c, ok := mustParse(t, shifty, "2g.2gb@1").Plan(1, true); change(c, ok) != "use 0" {
		t.Errorf("shifty: Plan(2g.2gb) = %s, want use 0: an idle instance comes first", change(c, ok))
	}
	plain := Layout{Model: mustLookup(t, "L4")}
	if c, ok := plain.Plan(0, true); ok || plain.Capacity(0, true) != 0 {
		t.Errorf("L4 got a MIG plan %+v", c)
	}
}

func TestApply(t *testing.T) {
	h100 := mustLookup(t, "H100")
	tests := []struct {
		model   *Model
		layout  string
		profile string
		change  Change
		want    string // the layout after, or part of the error
	}{
		{h100, "3g.40gb@0* 3g.40gb@4", "3g.40gb", Change{Use: 1, Create: -1}, "3g.40gb@0* 3g.40gb@4*"},
		{h100, "3g.40gb@4*", "1g.10gb", Change{Use: -1, Create: 2}, "1g.10gb@2* 3g.40gb@4*"},
		{h100, "1g.20gb@0 1g.20gb@2 3g.40gb@4*", "4g.40gb", Change{Use: -1, Create: 0, Delete: []int{0, 2}},
			"4g.40gb@0* 3g.40gb@4*"},

		{h100, "3g.40gb@0*", "3g.40gb", Change{Use: 0, Create: -1}, "instance 3g.40gb@0 is busy"},
		{h100, "3g.40gb@0", "1g.10gb", Change{Use: 0, Create: -1}, "instance 3g.40gb@0 is not a 1g.10gb"},
		{h100, "3g.40gb@0", "3g.40gb", Change{Use: 3, Create: -1}, "no instance 3"},
		{h100, "3g.40gb@0", "3g.40gb", Change{Use: 0, Create: -1, Delete: []int{0}}, "not both"},
		{h100, "3g.40gb@0", "3g.40gb", Change{Use: 0, Create: 4}, "not both"},
		{h100, "3g.40gb@0", "3g.40gb", Change{Use: -1, Create: -1}, "must use or create"},
		{h100, "3g.40gb@0* 3g.40gb@4", "4g.40gb", Change{Use: -1, Create: 0, Delete: []int{0}},
			"would destroy busy instance at slice 0"},
		{h100, "3g.40gb@0", "7g.80gb", Change{Use: -1, Create: 0, Delete: []int{0, 0}}, "no instance to destroy at slice 0"},
		{h100, "3g.40gb@0", "7g.80gb", Change{Use: -1, Create: 0, Delete: []int{4}}, "no instance to destroy at slice 4"},
		{h100, "3g.40gb@0", "1g.10gb", Change{Use: -1, Create: 1}, "1g.10gb@1 overlaps another instance"},
		{h100, "3g.40gb@0", "3g.40gb", Change{Use: -1, Create: 2}, "3g.40gb cannot start at memory slice 2"},
		{h100, "3g.40gb@0", "#9", Change{Use: -1, Create: 2}, "no profile 9"},
		{tight, "2g.2gb@0* 1g.1gb@4", "2g.2gb", Change{Use: -1, Create: 2}, "use 5 compute slices"},
	}
	for _, tt := range tests {
		l := mustParse(t, tt.model, tt.layout)
		p := 9
		if tt.profile != "#9" {
			p = mustProfile(t, tt.model, tt.profile)
		}
		got := ""
		if err := l.Apply(p, tt.change); err != nil {
			got = err.Error()
			if l.String() != tt.layout {
				t.Errorf("failed Apply(%+v) changed %q to %q", tt.change, tt.layout, l)
			}
		} else {
			got = l.String()
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("Apply(%s, %+v) on %q = %s, want %s", tt.profile, tt.change, tt.layout, got, tt.want)
		}
	}
}

func TestCapacity(t *testing.T) {
	h100 := mustLookup(t, "H100")
	tests := []struct {
		model           *Model
		layout          string
		profile         string
		static, dynamic int
	}{
		{h100, "", "1g.10gb", 0, 7},
		{h100, "", "1g.20gb", 0, 4},
		{h100, "", "2g.20gb", 0, 3},
		{h100, "", "3g.40gb", 0, 2},
		{h100, "", "4g.40gb", 0, 1},
		{h100, "3g.40gb@0 3g.40gb@4", "3g.40gb", 2, 2},
		{h100, "3g.40gb@0 3g.40gb@4*", "1g.10gb", 0, 4},
		{h100, "4g.40gb@0*", "1g.10gb", 0, 3}, // slices 4-6; 1g.10gb cannot take 7
		{h100, "4g.40gb@0*", "1g.20gb", 0, 2},
		{h100, "1g.10gb@0 1g.10gb@3*", "1g.10gb", 1, 6},
		{h100, "1g.10gb@3*", "4g.40gb", 0, 0},
		{h100, "7g.80gb@0", "7g.80gb", 1, 1},
		{tight, "2g.2gb@0*", "1g.1gb", 0, 1},           // compute, not memory, limits
		{tight, "1g.1gb@0 1g.1gb@7", "2g.2gb", 0, 1},   // destroying both idle 1g makes room for one 2g
		{shifty, "2g.2gb@1", "2g.2gb", 1, 4},           // destroying the idle 2g@1 makes room for 2g@0,2,4,6
		{shifty, "2g.2gb@1 1g.1gb@6*", "2g.2gb", 1, 3}, // keeping 2g@1 allows 2; without it, 2g@0,2,4
	}
	for _, tt := range tests {
		l := mustParse(t, tt.model, tt.layout)
		p := mustProfile(t, tt.model, tt.profile)
		if s, d := l.Capacity(p, false), l.Capacity(p, true); s != tt.static || d != tt.dynamic {
			t.Errorf("Capacity(%s) on %q = %d static, %d dynamic; want %d, %d", tt.profile, tt.layout, s, d, tt.static, tt.dynamic)
		}
	}
}

// TestCapacityBruteForce checks Capacity against an exhaustive search on
// random layouts of every MIG model, for every profile, static and dynamic.
func TestCapacityBruteForce(t *testing.T) {
	rng := newRand()
	cases := 0
	for _, m := range layoutModels() {
		for range 250 {
			l := randomLayout(rng, m)
			for p := range m.Profiles {
				for _, dynamic := range []bool{false, true} {
					got, want := l.Capacity(p, dynamic), bruteCapacity(l, p, dynamic)
					if got != want {
						t.Fatalf("%s %q: Capacity(%s, dynamic=%v) = %d, brute force %d", m.Name, l, m.Profiles[p].Name, dynamic, got, want)
					}
					cases++
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}

// TestPlanProperties plans every profile on random layouts of every MIG
// model and checks what must always hold.
func TestPlanProperties(t *testing.T) {
	rng := newRand()
	for _, m := range layoutModels() {
		for range 250 {
			l := randomLayout(rng, m)
			for p := range m.Profiles {
				for _, dynamic := range []bool{false, true} {
					checkPlan(t, l, p, dynamic)
				}
			}
		}
	}
}

func checkPlan(t *testing.T, l Layout, p int, dynamic bool) {
	t.Helper()
	before := l.String()
	name := fmt.Sprintf("%s %q: Plan(%s, dynamic=%v)", l.Model.Name, before, l.Model.Profiles[p].Name, dynamic)
	c, ok := l.Plan(p, dynamic)
	if again, _ := l.Clone().Plan(p, dynamic); change(again, ok) != change(c, ok) {
		t.Fatalf("%s is not deterministic: %+v then %+v", name, c, again)
	}
	if ok != (bruteCapacity(l, p, dynamic) > 0) {
		t.Fatalf("%s: ok=%v but brute-force capacity is %d", name, ok, bruteCapacity(l, p, dynamic))
	}
	if !ok {
		return
	}
	hasIdle := slices.ContainsFunc(l.Instances, func(in Instance) bool { return in.Profile == p && !in.Busy })
	switch {
	case hasIdle && c.Use < 0:
		t.Fatalf("%s = %+v, ignoring an idle instance of the profile", name, c)
	case !dynamic && (c.Create >= 0 || len(c.Delete) > 0):
		t.Fatalf("%s = %+v creates or destroys on a static GPU", name, c)
	case c.Use < 0 && len(c.Delete) != bruteFewestDeletes(l, p):
		t.Fatalf("%s destroys %v, but %d would do", name, c.Delete, bruteFewestDeletes(l, p))
	case !slices.IsSorted(c.Delete):
		t.Fatalf("%s = %+v: deletions not sorted", name, c)
	}
	next := l.Clone()
	if err := next.Apply(p, c); err != nil {
		t.Fatalf("%s = %+v does not apply: %v", name, c, err)
	}
	if err := next.Validate(); err != nil {
		t.Fatalf("%s = %+v gives an invalid layout: %v", name, c, err)
	}
	checkBusyKept(t, name, l, next)
}

// checkBusyKept fails unless every busy instance of before is busy in after,
// and after has exactly one more busy instance.
func checkBusyKept(t *testing.T, name string, before, after Layout) {
	t.Helper()
	busy := 0
	for _, in := range before.Instances {
		if in.Busy {
			busy++
			if !slices.Contains(after.Instances, in) {
				t.Fatalf("%s: busy %s@%d is gone from %q", name, before.profileName(in.Profile), in.Start, after)
			}
		}
	}
	if got := len(after.busyIndexes()); got != busy+1 {
		t.Fatalf("%s: %d busy instances after, want %d", name, got, busy+1)
	}
}

// TestPlanRepeatedReachesCapacity hosts tasks of one profile, one Plan at a
// time, until Plan says no, and checks that it hosted Capacity of them:
// Plan's one-at-a-time choices never waste room that Capacity counts. This
// holds for aligned starts only: on shifty, Plan uses an idle 2g@1 (an idle
// instance is always preferred) where destroying it would make room for two.
func TestPlanRepeatedReachesCapacity(t *testing.T) {
	rng := newRand()
	for _, m := range alignedModels() {
		for range 250 {
			l := randomLayout(rng, m)
			for p := range m.Profiles {
				for _, dynamic := range []bool{false, true} {
					want := l.Capacity(p, dynamic)
					next, hosted := l.Clone(), 0
					for c, ok := next.Plan(p, dynamic); ok; c, ok = next.Plan(p, dynamic) {
						if err := next.Apply(p, c); err != nil {
							t.Fatalf("%s %q: %v", m.Name, next, err)
						}
						hosted++
					}
					if hosted != want {
						t.Fatalf("%s %q: Plan hosted %d %s (dynamic=%v) ending at %q, Capacity says %d",
							m.Name, l, hosted, m.Profiles[p].Name, dynamic, next, want)
					}
				}
			}
		}
	}
}

// TestHostsMatchesPlan checks the cheap mask against Plan on random
// layouts of every MIG model, static and dynamic.
func TestHostsMatchesPlan(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, m := range Models() {
		if !m.MIG {
			continue
		}
		for i := 0; i < 2000; i++ {
			l := randomLayout(rng, m)
			for _, dynamic := range []bool{false, true} {
				mask := l.Hosts(dynamic)
				for p := range m.Profiles {
					_, ok := l.Plan(p, dynamic)
					if got := mask&(1<<p) != 0; got != ok {
						t.Fatalf("%s %q dynamic=%v profile %s: Hosts says %v, Plan says %v", m.Name, l, dynamic, m.Profiles[p].Name, got, ok)
					}
				}
			}
		}
	}
}

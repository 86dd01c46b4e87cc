package gpu

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	h100, a30 := mustLookup(t, "H100"), mustLookup(t, "A30")
	tests := []struct {
		why     string
		model   *Model
		layout  string // instances in this order, as String writes them
		wantErr string // "" when valid
	}{
		{"empty", h100, "", ""},
		{"seven 1g.10gb at 0..6; slice 7 stays unused", h100,
			"1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 1g.10gb@5 1g.10gb@6", ""},
		{"two halves", h100, "3g.40gb@0 3g.40gb@4", ""},
		{"4g+3g uses all 7 compute slices", h100, "4g.40gb@0 3g.40gb@4*", ""},
		{"four 1g.20gb, one per pair of slices", h100, "1g.20gb@0 1g.20gb@2 1g.20gb@4* 1g.20gb@6", ""},
		{"three 2g.20gb and a 1g.10gb: 7 compute, slice 7 unused", h100,
			"2g.20gb@0 2g.20gb@2 2g.20gb@4 1g.10gb@6", ""},
		{"4g+2g+1g.20gb fill all 8 slices with 7 compute", h100, "4g.40gb@0 2g.20gb@4 1g.20gb@6", ""},
		{"whole GPU", h100, "7g.80gb@0*", ""},
		{"A30 halves", a30, "2g.12gb@0 1g.6gb@2 1g.6gb@3", ""},

		{"4g.40gb only starts at 0, so 4g+4g is impossible", h100,
			"4g.40gb@0 4g.40gb@4", "4g.40gb cannot start at memory slice 4"},
		{"3g.40gb starts at 0 or 4, not 2", h100, "3g.40gb@2", "3g.40gb cannot start at memory slice 2"},
		{"1g.10gb cannot take slice 7", h100, "1g.10gb@7", "1g.10gb cannot start at memory slice 7"},
		{"2g.20gb cannot start at 6", h100, "4g.40gb@0 2g.20gb@4 2g.20gb@6", "2g.20gb cannot start at memory slice 6"},
		{"A30 has 4 slices only", a30, "4g.24gb@0 1g.6gb@4", "1g.6gb cannot start at memory slice 4"},
		{"2g.20gb@0 holds slices 0-1", h100, "2g.20gb@0 1g.10gb@1", "1g.10gb@1 overlaps another instance"},
		{"3g.40gb@0 holds slices 0-3", h100, "3g.40gb@0 1g.20gb@2", "1g.20gb@2 overlaps another instance"},
		{"7g.80gb holds every slice", h100, "7g.80gb@0 1g.10gb@6", "1g.10gb@6 overlaps another instance"},
		{"same slot twice", h100, "1g.10gb@3 1g.10gb@3", "1g.10gb@3 overlaps another instance"},
		{"instances must be sorted by start", h100, "1g.10gb@4 1g.10gb@0", "not sorted by start"},
		// No catalog layout with valid, disjoint slices exceeds the compute
		// budget (TestComputeBudgetNeverBindsInCatalog), so the made-up
		// model tight (3 compute slices, 8 memory slices) checks it.
		{"tight: 2g+1g = 3 compute slices fit", tight, "2g.2gb@0 1g.1gb@7", ""},
		{"tight: 2g+1g+1g = 4 compute slices exceed 3", tight, "2g.2gb@0 1g.1gb@2 1g.1gb@7",
			"use 4 compute slices, more than the 3 there are"},
	}
	for _, tt := range tests {
		l, err := parseLayout(tt.model, tt.layout)
		if err != nil {
			t.Fatalf("%s: %v", tt.why, err)
		}
		err = l.Validate()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: Validate(%s) = %v, want nil", tt.why, tt.layout, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: Validate(%s) = %v, want an error containing %q", tt.why, tt.layout, err, tt.wantErr)
		}
	}
}

func TestValidateModel(t *testing.T) {
	tests := []struct {
		layout  Layout
		wantErr string
	}{
		{Layout{}, "gpu: invalid layout: no GPU model"},
		{Layout{Model: mustLookup(t, "L4")}, "gpu: invalid layout: L4 does not support MIG"},
		{Layout{Model: mustLookup(t, "A30"), Instances: []Instance{{Profile: 3}}},
			`gpu: invalid A30 layout "#3@0": instance 0 has no profile 3`},
	}
	for _, tt := range tests {
		if err := tt.layout.Validate(); err == nil || err.Error() != tt.wantErr {
			t.Errorf("Validate(%+v) = %v, want %s", tt.layout, err, tt.wantErr)
		}
	}
}

func TestNewLayout(t *testing.T) {
	h100 := mustLookup(t, "H100")
	tests := []struct {
		model    *Model
		profiles []string
		want     string // String of the layout, or the error
	}{
		{h100, nil, "(empty)"},
		{h100, []string{"3g.40gb", "3g.40gb"}, "3g.40gb@0 3g.40gb@4"},
		{h100, []string{"1g.10gb", "4g.40gb"}, "gpu: new layout: no room for 4g.40gb on H100-80GB after 1g.10gb@0"},
		// Lowest starts, not Plan's room-keeping ones: the 3g no longer fits.
		{h100, []string{"1g.10gb", "2g.20gb", "1g.20gb", "3g.40gb"},
			"gpu: new layout: no room for 3g.40gb on H100-80GB after 1g.10gb@0 2g.20gb@2 1g.20gb@4"},
		{h100, []string{"1g.10gb", "2g.20gb", "1g.20gb"}, "1g.10gb@0 2g.20gb@2 1g.20gb@4"},
		{h100, []string{"4g.40gb", "2g.20gb", "1g.10gb"}, "4g.40gb@0 2g.20gb@4 1g.10gb@6"},
		// Slice 7 is free, but 1g.10gb cannot start there.
		{h100, []string{"4g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"},
			"gpu: new layout: no room for 1g.10gb on H100-80GB after 4g.40gb@0 2g.20gb@4 1g.10gb@6"},
		{h100, []string{"7g.80gb", "1g.10gb"}, "gpu: new layout: no room for 1g.10gb on H100-80GB after 7g.80gb@0"},
		{h100, []string{"1g.5gb"}, "new layout: gpu: H100-80GB has no MIG profile \"1g.5gb\" (valid: 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)"},
		{mustLookup(t, "L4"), nil, "gpu: new layout: L4 does not support MIG"},
		{tight, []string{"2g.2gb", "2g.2gb"}, "gpu: new layout: no room for 2g.2gb on TIGHT after 2g.2gb@0"},
	}
	for _, tt := range tests {
		l, err := NewLayout(tt.model, tt.profiles...)
		got := l.String()
		if err != nil {
			got = err.Error()
		} else if verr := l.Validate(); verr != nil {
			t.Errorf("NewLayout(%s, %v) is invalid: %v", tt.model.Name, tt.profiles, verr)
		}
		if got != tt.want {
			t.Errorf("NewLayout(%s, %v) = %s, want %s", tt.model.Name, tt.profiles, got, tt.want)
		}
	}
}

func TestNewLayoutCaughtOnSecondInstance(t *testing.T) {
	// The 4g has to come first: "1g.10gb@0" takes the only 4g start.
	if _, err := NewLayout(mustLookup(t, "H100"), "4g.40gb", "1g.10gb", "4g.40gb"); err == nil {
		t.Fatal("NewLayout placed two 4g.40gb")
	}
}

func TestParseLayout(t *testing.T) {
	h100 := mustLookup(t, "H100")
	tests := []struct{ in, want string }{
		{"", "(empty)"},
		{"(empty)", "(empty)"},
		{"3g.40gb@0 2g.20gb@4* 1g.10gb@6", "3g.40gb@0 2g.20gb@4* 1g.10gb@6"},
		{"1G.10GB@6  3g.40gb@0", "3g.40gb@0 1g.10gb@6"}, // sorted, case ignored
		{"3g.40gb", `gpu: parse layout "3g.40gb": instance "3g.40gb" is not profile@start`},
		{"3g.40gb@x", `gpu: parse layout "3g.40gb@x": instance "3g.40gb@x": bad start: strconv.Atoi: parsing "x": invalid syntax`},
		{"3g.40gb@2", `gpu: parse layout "3g.40gb@2": gpu: invalid H100-80GB layout "3g.40gb@2": 3g.40gb cannot start at memory slice 2 (valid starts [0 4])`},
	}
	for _, tt := range tests {
		l, err := ParseLayout(h100, tt.in)
		got := l.String()
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("ParseLayout(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	rng := newRand()
	for _, m := range layoutModels() {
		for range 200 {
			l := randomLayout(rng, m)
			back, err := ParseLayout(m, l.String())
			if err != nil || back.String() != l.String() {
				t.Fatalf("%s: %q came back as %q, %v", m.Name, l, back, err)
			}
		}
	}
}

func TestClone(t *testing.T) {
	l := mustParse(t, mustLookup(t, "H100"), "3g.40gb@0* 3g.40gb@4")
	c := l.Clone()
	c.Instances[0].Busy = false
	c.insert(Instance{})
	if l.String() != "3g.40gb@0* 3g.40gb@4" {
		t.Fatalf("changing a clone changed the original: %s", l)
	}
}

func TestUsageReports(t *testing.T) {
	h100, a30 := mustLookup(t, "H100"), mustLookup(t, "A30")
	tests := []struct {
		model       *Model
		layout      string
		idle        bool
		busySlices  int
		freeCompute int
	}{
		{h100, "", true, 0, 7},
		{h100, "3g.40gb@0 3g.40gb@4", true, 0, 1},
		{h100, "3g.40gb@0* 2g.20gb@4 1g.20gb@6*", false, 6, 1},
		{h100, "1g.10gb@0* 1g.10gb@1* 1g.10gb@6*", false, 3, 4},
		{h100, "7g.80gb@0*", false, 8, 0},
		{a30, "2g.12gb@0 1g.6gb@3*", false, 1, 1},
	}
	for _, tt := range tests {
		l := mustParse(t, tt.model, tt.layout)
		if l.Idle() != tt.idle || l.BusySlices() != tt.busySlices || l.FreeCompute() != tt.freeCompute {
			t.Errorf("%q: Idle %v BusySlices %d FreeCompute %d, want %v %d %d", tt.layout,
				l.Idle(), l.BusySlices(), l.FreeCompute(), tt.idle, tt.busySlices, tt.freeCompute)
		}
	}
}

func TestRelease(t *testing.T) {
	h100 := mustLookup(t, "H100")
	tests := []struct {
		layout string
		start  int
		want   string // the layout after, or the error
	}{
		{"3g.40gb@0* 3g.40gb@4*", 4, "3g.40gb@0* 3g.40gb@4"},
		{"3g.40gb@0* 3g.40gb@4", 4, "gpu: release slice 4: 3g.40gb@4 is not busy"},
		{"3g.40gb@0*", 2, `gpu: release slice 2: no instance starts there in "3g.40gb@0*"`},
	}
	for _, tt := range tests {
		l := mustParse(t, h100, tt.layout)
		got := ""
		if err := l.Release(tt.start); err != nil {
			got = err.Error()
		} else {
			got = l.String()
		}
		if got != tt.want {
			t.Errorf("Release(%d) on %q = %s, want %s", tt.start, tt.layout, got, tt.want)
		}
	}
}

package workload

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func nodeNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("node-%04d", i)
	}
	return out
}

func TestSpotInterruptions(t *testing.T) {
	nodes := nodeNames(500)
	const rate, horizon = 0.01, 1000 * time.Hour
	notice := 2 * time.Minute
	faults, err := SpotInterruptions(nodes, rate, notice, horizon, 1)
	if err != nil {
		t.Fatal(err)
	}
	// A renewal process of mean cycle 1/rate + notice: about 5,000 notices,
	// standard deviation about 71.
	want := float64(len(nodes)) * horizon.Hours() / (1/rate + notice.Hours())
	if got := float64(len(faults)); math.Abs(got-want) > 4*math.Sqrt(want) {
		t.Errorf("%v notices, want about %.0f", got, want)
	}
	w := Workload{Faults: faults}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	last := map[string]time.Duration{}
	for _, f := range faults {
		if f.Kind != SpotNotice || f.Notice != notice || f.At >= horizon || f.At%time.Second != 0 {
			t.Fatalf("fault %+v: want a spot notice of %v at a whole second before %v", f, notice, horizon)
		}
		if prev, ok := last[f.Node]; ok && f.At < prev+notice {
			t.Fatalf("%s: notice at %v inside the previous notice period from %v", f.Node, f.At, prev)
		}
		last[f.Node] = f.At
	}
	// Each node's faults depend on its name only, not on the list.
	reversed := slices.Clone(nodes)
	slices.Reverse(reversed)
	again, _ := SpotInterruptions(reversed, rate, notice, horizon, 1)
	if !reflect.DeepEqual(faults, again) {
		t.Error("reordering the nodes changed the faults")
	}
	other, _ := SpotInterruptions(nodes, rate, notice, horizon, 2)
	if reflect.DeepEqual(faults, other) {
		t.Error("seeds 1 and 2 gave the same faults")
	}
}

func TestNodeFailures(t *testing.T) {
	nodes := nodeNames(300)
	mtbf, mttr, horizon := 100*time.Hour, 10*time.Hour, 2000*time.Hour
	faults, err := NodeFailures(nodes, mtbf, mttr, horizon, 3)
	if err != nil {
		t.Fatal(err)
	}
	w := Workload{Faults: faults}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	// Per node, failures and repairs alternate, a failure first; the time
	// down is about mttr / (mtbf + mttr) of the horizon.
	downSince := map[string]time.Duration{}
	var down time.Duration
	failures := 0
	for _, f := range faults {
		since, isDown := downSince[f.Node]
		switch {
		case f.Kind == NodeFailure && !isDown:
			downSince[f.Node] = f.At
			failures++
		case f.Kind == NodeRepair && isDown:
			down += f.At - since
			delete(downSince, f.Node)
		default:
			t.Fatalf("%s: %s at %v out of turn", f.Node, f.Kind, f.At)
		}
	}
	for _, since := range downSince {
		down += horizon - since
	}
	got := down.Hours() / (horizon.Hours() * float64(len(nodes)))
	want := mttr.Hours() / (mtbf + mttr).Hours()
	if math.Abs(got-want) > 0.01 {
		t.Errorf("nodes down %.4f of the time, want %.4f", got, want)
	}
	wantFailures := float64(len(nodes)) * horizon.Hours() / (mtbf + mttr).Hours()
	if math.Abs(float64(failures)-wantFailures) > 4*math.Sqrt(wantFailures) {
		t.Errorf("%d failures, want about %.0f", failures, wantFailures)
	}
}

func TestFaultInputs(t *testing.T) {
	cases := []struct {
		name string
		run  func() ([]Fault, error)
		want string // "" for no error and no faults
	}{
		{"no spot rate", func() ([]Fault, error) { return SpotInterruptions(nodeNames(3), 0, time.Minute, time.Hour, 1) }, ""},
		{"no mtbf", func() ([]Fault, error) { return NodeFailures(nodeNames(3), 0, time.Hour, time.Hour, 1) }, ""},
		{"negative rate", func() ([]Fault, error) { return SpotInterruptions(nodeNames(3), -1, time.Minute, time.Hour, 1) }, "want none negative"},
		{"negative repair", func() ([]Fault, error) { return NodeFailures(nodeNames(3), time.Hour, -time.Hour, time.Hour, 1) }, "want none negative"},
		{"repeated node", func() ([]Fault, error) {
			return NodeFailures([]string{"a", "b", "a"}, time.Hour, time.Hour, time.Hour, 1)
		}, `node 2: empty or repeated name "a"`},
		{"empty node", func() ([]Fault, error) { return SpotInterruptions([]string{""}, 1, 0, time.Hour, 1) }, "empty or repeated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			faults, err := c.run()
			switch {
			case c.want == "" && (err != nil || len(faults) != 0):
				t.Errorf("got %d faults, error %v; want none", len(faults), err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

package alloc

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func hours(h float64) time.Time { return t0.Add(time.Duration(h * float64(time.Hour))) }

// twoTeams: 8 H100s for 10 hours at $3.93 ($314.40); ml holds 4 for the
// whole period (40 GPU-hours, $157.20), web 2 for 5 hours (10, $39.30),
// and 30 GPU-hours ($117.90) stand idle.
func twoTeams() Input {
	return Input{Start: t0, End: hours(10), Capacity: map[string]float64{"H100": 8}, Prices: map[string]float64{"H100": 3.93},
		Records: []Record{
			{ID: "j1", Owner: "ml", Model: "H100", GPUs: 4, Start: t0, End: hours(10)},
			{ID: "j2", Owner: "web", Model: "H100", GPUs: 2, Start: hours(2), End: hours(7)},
		}}
}

type want struct{ owner, total string }

func TestAllocate(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*Input)
		want  []want
		total string
	}{
		{"idle separate", func(*Input) {}, []want{{"ml", "157.20"}, {"web", "39.30"}, {Idle, "117.90"}}, "314.40"},
		{"idle shared by used cost", func(in *Input) { in.Idle = IdleShare },
			[]want{{"ml", "251.52"}, {"web", "62.88"}}, "314.40"}, // 117.90 split 4:1: 94.32 and 23.58
		{"a run before the period counts from its start", func(in *Input) {
			in.Records = append(in.Records, Record{ID: "j3", Owner: "web", Model: "H100", GPUs: 1, Start: hours(-5), End: hours(1)})
		}, []want{{"ml", "157.20"}, {"web", "43.23"}, {Idle, "113.97"}}, "314.40"},
		{"a run after the period does not count", func(in *Input) {
			in.Records = append(in.Records, Record{ID: "j3", Owner: "web", Model: "H100", GPUs: 1, Start: hours(10), End: hours(12)})
		}, []want{{"ml", "157.20"}, {"web", "39.30"}, {Idle, "117.90"}}, "314.40"},
		{"shared cost weighted by allocated cost", func(in *Input) { in.SharedUSD = 100 },
			[]want{{"ml", "237.20"}, {"web", "59.30"}, {Idle, "117.90"}}, "414.40"},
		{"shared cost even", func(in *Input) { in.SharedUSD = 100; in.Shared = SharedEven },
			[]want{{"ml", "207.20"}, {"web", "89.30"}, {Idle, "117.90"}}, "414.40"},
		{"shared weighted after idle is shared", func(in *Input) { in.SharedUSD = 100; in.Idle = IdleShare },
			[]want{{"ml", "331.52"}, {"web", "82.88"}}, "414.40"},
		{"a model no one used is all idle", func(in *Input) {
			in.Capacity["L4"] = 2
			in.Prices["L4"] = 0.805
			in.Idle = IdleShare
		}, []want{{"ml", "251.52"}, {"web", "62.88"}, {Idle, "16.10"}}, "330.50"},
		{"a third of a cent goes by largest remainder", func(in *Input) {
			*in = Input{Start: t0, End: hours(1), Capacity: map[string]float64{"A100": 1}, Prices: map[string]float64{"A100": 1},
				Records: []Record{
					{Owner: "a", Model: "A100", GPUs: 1.0 / 3, Start: t0, End: hours(1)},
					{Owner: "b", Model: "A100", GPUs: 1.0 / 3, Start: t0, End: hours(1)},
					{Owner: "c", Model: "A100", GPUs: 1.0 / 3, Start: t0, End: hours(1)},
				}}
		}, []want{{"a", "0.34"}, {"b", "0.33"}, {"c", "0.33"}}, "1.00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := twoTeams()
			c.edit(&in)
			b, err := Allocate(in)
			if err != nil {
				t.Fatal(err)
			}
			owners := b.Owners()
			if len(owners) != len(c.want) {
				t.Fatalf("owners %+v, want %v", owners, c.want)
			}
			var sum Cents
			for i, w := range c.want {
				if owners[i].Owner != w.owner || owners[i].Total().String() != w.total {
					t.Errorf("owner %d: %s $%s, want %s $%s", i, owners[i].Owner, owners[i].Total(), w.owner, w.total)
				}
				sum += owners[i].Total()
			}
			if b.Total.String() != c.total || sum != b.Total {
				t.Errorf("total $%s, lines add up to $%s; want $%s", b.Total, sum, c.total)
			}
		})
	}
}

// On random fleets and runs, the lines add up to the capacity cost plus
// the shared cost to the cent, whichever way idle and shared cost go.
func TestLinesAddUpToTheCent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	models := []string{"H100", "A100", "L4"}
	for trial := range 300 {
		in := Input{Start: t0, End: hours(24), Capacity: map[string]float64{}, Prices: map[string]float64{},
			Idle: []IdleMode{IdleSeparate, IdleShare}[trial%2], Shared: []SharedMode{SharedEven, SharedWeighted}[trial/2%2],
			SharedUSD: float64(r.IntN(100000)) / 100}
		var want Cents
		for _, m := range models {
			in.Capacity[m] = float64(1 + r.IntN(16))
			in.Prices[m] = float64(1+r.IntN(999)) / 97
			want += toCents(in.Capacity[m] * 24 * in.Prices[m])
		}
		want += toCents(in.SharedUSD)
		for i := range r.IntN(30) {
			m := models[r.IntN(len(models))]
			start := r.Float64() * 30
			in.Records = append(in.Records, Record{Owner: string(rune('a' + i%5)), Model: m, GPUs: r.Float64() * in.Capacity[m] / 30,
				Start: hours(start - 3), End: hours(start - 3 + r.Float64()*20)})
		}
		b, err := Allocate(in)
		if err != nil {
			t.Fatal(err)
		}
		var sum Cents
		for _, l := range b.Lines {
			if l.Used < 0 || l.Idle < 0 || l.Shared < 0 {
				t.Fatalf("trial %d: negative line %+v", trial, l)
			}
			sum += l.Total()
		}
		if sum != want || b.Total != want {
			t.Fatalf("trial %d: lines $%s, total $%s, want $%s", trial, sum, b.Total, want)
		}
	}
}

func TestAllocateRefuses(t *testing.T) {
	cases := []struct {
		name, want string
		edit       func(*Input)
	}{
		{"missing price", "no price for GPU model A100", func(in *Input) {
			in.Records = append(in.Records, Record{Owner: "ml", Model: "A100", GPUs: 1, Start: t0, End: hours(1)})
			in.Capacity["A100"] = 1
		}},
		{"missing capacity", "no capacity for GPU model A100", func(in *Input) {
			in.Records = append(in.Records, Record{Owner: "ml", Model: "A100", GPUs: 1, Start: t0, End: hours(1)})
			in.Prices["A100"] = 1.29
		}},
		{"use above capacity", "H100: 90.0000 GPU-hours used exceed the capacity of 8 GPUs", func(in *Input) {
			in.Records = append(in.Records, Record{Owner: "ml", Model: "H100", GPUs: 4, Start: t0, End: hours(10)})
		}},
		{"empty period", "before it starts", func(in *Input) { in.End = in.Start }},
		{"unknown idle mode", `idle "spread"`, func(in *Input) { in.Idle = "spread" }},
		{"an owner named as the idle line", "idle line's name", func(in *Input) { in.Records[0].Owner = Idle }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := twoTeams()
			c.edit(&in)
			_, err := Allocate(in)
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	cases := []struct {
		total   Cents
		weights []float64
		want    []Cents
	}{
		{100, []float64{1, 1, 1}, []Cents{34, 33, 33}},
		{5, []float64{1, 0, 3}, []Cents{1, 0, 4}},
		{7, []float64{0, 0}, []Cents{0, 0}},
		{0, []float64{2, 1}, []Cents{0, 0}},
		{2, []float64{1, 1, 1}, []Cents{1, 1, 0}},
	}
	for _, c := range cases {
		got := split(c.total, c.weights)
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("split(%d, %v) = %v, want %v", c.total, c.weights, got, c.want)
				break
			}
		}
	}
}

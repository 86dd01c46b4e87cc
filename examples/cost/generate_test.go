package costexample

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/corral-sched/corral/internal/gpu"
)

// The team's month, generated deterministically. See README.md for the
// assumptions in words.
const (
	hours       = 30 * 24 // one month
	gangSize    = 8       // GPUs per training job
	seedA       = 2026
	seedB       = 11
	minGangs    = 2 // training jobs running at the quietest weekend hour
	maxGangs    = 7 // ... and at the busiest weekday hour
	trainingMid = 5 // weekday level the random walk is pulled towards
)

// service is one inference service: its replicas each need one MIG slice of
// the given profile, and run PeakReplicas copies at the daily peak.
type service struct {
	Name         string
	Profile      string
	PeakReplicas int
}

var services = []service{
	{"chat-small", "1g.10gb", 9},
	{"embed", "1g.10gb", 6},
	{"rerank", "1g.10gb", 4},
	{"classify", "1g.10gb", 5},
	{"ocr", "2g.20gb", 5},
	{"asr", "2g.20gb", 4},
	{"summarise", "2g.20gb", 3},
	{"code-assist", "3g.40gb", 4},
	{"vision", "3g.40gb", 3},
	{"search-llm", "3g.40gb", 3},
}

// month is the generated demand: per hour, the replicas of each service and
// the training GPUs.
type month struct {
	replicas [][]int // [hour][service]
	training []float64
}

// daily is the share of peak traffic at an hour: lowest at 04:00, highest
// at 16:00, lower at weekends.
func daily(h int) float64 {
	hourOfDay, day := h%24, h/24
	f := 0.6 + 0.4*math.Sin(2*math.Pi*float64(hourOfDay-10)/24)
	if day%7 >= 5 {
		f *= 0.75
	}
	return f
}

func generate() month {
	rng := rand.New(rand.NewPCG(seedA, seedB))
	m := month{replicas: make([][]int, hours), training: make([]float64, hours)}
	gangs := float64(trainingMid)
	for h := range hours {
		m.replicas[h] = make([]int, len(services))
		for i, s := range services {
			noise := 1 + 0.1*(2*rng.Float64()-1)
			m.replicas[h][i] = max(1, int(math.Round(float64(s.PeakReplicas)*daily(h)*noise)))
		}
		// Training: a random walk in running jobs, pulled towards its mean,
		// fewer at weekends; jobs are whole 8-GPU gangs.
		target := float64(trainingMid)
		if (h/24)%7 >= 5 {
			target = minGangs + 1
		}
		gangs += 0.15*(target-gangs) + (rng.Float64()*2-1)*0.8
		gangs = min(max(gangs, minGangs), maxGangs)
		m.training[h] = gangSize * math.Round(gangs)
	}
	return m
}

// wholeCards is inference on whole cards: one GPU per replica.
func wholeCards(m month) []float64 {
	out := make([]float64, hours)
	for h, rs := range m.replicas {
		for _, r := range rs {
			out[h] += float64(r)
		}
	}
	return out
}

// usedCards is the inference work in card-equivalents: each replica uses
// its profile's compute slices out of the card's seven.
func usedCards(m month, model *gpu.Model) ([]float64, error) {
	out := make([]float64, hours)
	for h, rs := range m.replicas {
		for i, r := range rs {
			p, err := model.ProfileIndex(services[i].Profile)
			if err != nil {
				return nil, err
			}
			out[h] += float64(r*model.Profiles[p].Compute) / float64(model.ComputeSlices)
		}
	}
	return out, nil
}

// migPacked packs each hour's replicas onto H100s with corral's MIG layout
// engine: largest profiles first, each on the first GPU whose layout can
// host it (creating instances as needed), else on a new GPU.
func migPacked(m month, model *gpu.Model) ([]float64, error) {
	order := make([]int, len(services))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		pa, _ := model.ProfileIndex(services[a].Profile)
		pb, _ := model.ProfileIndex(services[b].Profile)
		return model.Profiles[pb].Slices - model.Profiles[pa].Slices
	})
	out := make([]float64, hours)
	for h, rs := range m.replicas {
		var cards []gpu.Layout
		for _, i := range order {
			p, err := model.ProfileIndex(services[i].Profile)
			if err != nil {
				return nil, err
			}
			for range rs[i] {
				placed, err := place(&cards, model, p)
				if err != nil {
					return nil, err
				}
				if !placed {
					return nil, fmt.Errorf("hour %d: %s does not fit an empty %s", h, services[i].Profile, model.Name)
				}
			}
		}
		out[h] = float64(len(cards))
	}
	return out, nil
}

// place hosts one task of profile p on the first card that can take it,
// opening a new card when none can.
func place(cards *[]gpu.Layout, model *gpu.Model, p int) (bool, error) {
	for i := range *cards {
		if c, ok := (*cards)[i].Plan(p, true); ok {
			return true, (*cards)[i].Apply(p, c)
		}
	}
	l := gpu.Layout{Model: model}
	c, ok := l.Plan(p, true)
	if !ok {
		return false, nil
	}
	if err := l.Apply(p, c); err != nil {
		return false, err
	}
	*cards = append(*cards, l)
	return true, nil
}

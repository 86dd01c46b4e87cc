package placement

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFragHandComputed(t *testing.T) {
	mix := Mix{
		{CPUMilli: 4000, GPUMilli: 500, NumGPU: 1, Weight: 0.5},  // fits: frag = GPUs under 500 = 300 + 0
		{CPUMilli: 1000, GPUMilli: 1000, NumGPU: 2, Weight: 0.3}, // one free GPU only: all idle 1900
		{CPUMilli: 2000, Weight: 0.2},                            // CPU-only: all idle 1900
	}
	left := []int64{1000, 600, 300, 0}
	cases := []struct {
		name  string
		mix   Mix
		model string
		cpu   int64
		want  float64
	}{
		{"mixed", mix, "A", 10000, 0.5*300 + 0.3*1900 + 0.2*1900},
		{"sharing pod lacks CPU", mix, "A", 3000, 0.5*1900 + 0.3*1900 + 0.2*1900},
		{"model not allowed", Mix{{CPUMilli: 1, GPUMilli: 100, NumGPU: 1, Models: []string{"B"}, Weight: 1}}, "A", 10000, 1900},
		{"model allowed", Mix{{CPUMilli: 1, GPUMilli: 100, NumGPU: 1, Models: []string{"B", "A"}, Weight: 1}}, "A", 10000, 0},
		{"whole GPU pod that fits", Mix{{CPUMilli: 1, GPUMilli: 1000, NumGPU: 1, Weight: 1}}, "A", 10000, 900},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.mix.Frag(c.model, c.cpu, left); math.Abs(got-c.want) > 1e-9 {
				t.Errorf("Frag = %v, want %v", got, c.want)
			}
		})
	}
	if got := mix.Frag("", 10000, nil); got != 0 {
		t.Errorf("a node without GPUs has frag %v, want 0", got)
	}
}

func TestTypicalMix(t *testing.T) {
	var pods []Pod
	add := func(n int, p *Pod) {
		for i := 0; i < n; i++ {
			pods = append(pods, *p)
		}
	}
	add(6, share(2000, 500))
	add(2, share(4000, 200)) // ties with the next group: larger CPU first
	add(2, whole(1000, 1))
	add(1, cpuOnly(8000))
	all := TypicalMix(pods, 95)
	if len(all) != 4 {
		t.Fatalf("95%% of 11 pods needs all 4 groups, got %d", len(all))
	}
	if all[1].CPUMilli != 4000 || all[2].NumGPU != 1 || all[2].GPUMilli != 1000 {
		t.Errorf("order = %+v, want popularity then larger request", all)
	}
	top := TypicalMix(pods, 70) // 6/11 < 70%, 8/11 >= 70%
	if len(top) != 2 {
		t.Fatalf("70%% cutoff kept %d groups, want 2", len(top))
	}
	if math.Abs(top[0].Weight-0.75) > 1e-12 || math.Abs(top[1].Weight-0.25) > 1e-12 {
		t.Errorf("renormalised weights %v and %v, want 0.75 and 0.25", top[0].Weight, top[1].Weight)
	}
}

func TestMixLearnerDecays(t *testing.T) {
	l := newMixLearner(10, 100)
	for i := 0; i < 50; i++ {
		l.observe(share(1000, 500))
	}
	for i := 0; i < 50; i++ {
		l.observe(whole(1000, 1))
	}
	m := l.mix()
	if len(m) != 2 || m[0].GPUMilli != 1000 || m[0].Weight < 0.95 {
		t.Fatalf("after a shift the recent shape should dominate, got %+v", m)
	}
	sum := 0.0
	for _, t := range m {
		sum += t.Weight
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("weights sum to %v", sum)
	}
}

func TestFragCopiesHandComputed(t *testing.T) {
	mix := Mix{
		{CPUMilli: 8000, GPUMilli: 1000, NumGPU: 1, Weight: 0.5}, // 3 free GPUs, CPU for 2: absorbs 2000 of 3600
		{CPUMilli: 2000, GPUMilli: 470, NumGPU: 1, Weight: 0.5},  // 2+2+2+1 copies: absorbs 3290
	}
	left := []int64{1000, 1000, 1000, 600}
	if got, want := mix.FragCopies("A", 20000, left), 0.5*1600+0.5*310; math.Abs(got-want) > 1e-9 {
		t.Errorf("FragCopies = %v, want %v", got, want)
	}
	// FGD's one-pod view: both fit, only the 600-left GPU is a fragment for
	// the whole-GPU pod.
	if got, want := mix.Frag("A", 20000, left), 0.5*600.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("Frag = %v, want %v", got, want)
	}
	if got := mix.FragCopies("B", 20000, []int64{0, 0}); got != 0 {
		t.Errorf("a full node has no fragmentation, got %v", got)
	}
}

func TestCorralKeepsCPUForIdleGPUs(t *testing.T) {
	// Node a has four free GPUs and CPU for exactly four typical pods; node
	// b's GPUs are all taken. A CPU-only pod on a would strand a GPU, which
	// FGD's one-pod view does not see (one more pod still fits) but corral's
	// does.
	nodes := []Node{gpuNode("a", 32000, 4, "A"), gpuNode("b", 32000, 2, "A")}
	c := withLeft(nodes, nil, []int64{0, 0})
	pods := []Pod{*whole(8000, 1)}
	pod := cpuOnly(8000)
	if got := choose(t, NewFGD(TypicalMix(pods, 95)), c, pod); got.Node != 0 {
		t.Fatalf("expected FGD to tie and take the first node, got %d", got.Node)
	}
	if got := choose(t, NewCorral(pods), c, pod); got.Node != 1 {
		t.Errorf("corral put the CPU-only pod on node %d, want 1", got.Node)
	}
}

func TestCorralOnlineLearnsTheMix(t *testing.T) {
	p := NewCorralOnline()
	if len(p.mix) != 0 {
		t.Fatal("corral-online starts with a mix")
	}
	p.Observe(whole(8000, 1))
	p.follow() // as Place does first
	if len(p.mix) != 1 || p.mix[0].NumGPU != 1 || p.mix[0].Weight != 1 {
		t.Fatalf("after one pod the mix is %+v", p.mix)
	}
}

// A blender prepared for the mix is the blend of Frag and FragCopies to
// the last bit, over random
// mixes (shares, whole GPUs, CPU only, restricted models) and node states.
func TestBlenderIsFragAndFragCopies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	models := [][]string{nil, {"A"}, {"B"}, {"A", "B"}}
	for trial := range 2000 {
		mix := make(Mix, 1+rng.IntN(12))
		for i := range mix {
			m := &mix[i]
			m.CPUMilli, m.Weight, m.Models = rng.Int64N(16000), rng.Float64(), models[rng.IntN(len(models))]
			switch rng.IntN(3) {
			case 0:
				m.GPUMilli, m.NumGPU = 50+rng.Int64N(950), 1
			case 1:
				m.GPUMilli, m.NumGPU = MilliPerGPU, 1+rng.IntN(8)
			}
		}
		left := make([]int64, rng.IntN(9))
		for g := range left {
			left[g] = []int64{0, 1000, rng.Int64N(1001)}[rng.IntN(3)]
		}
		gpuModel, cpu := []string{"A", "B", "C"}[rng.IntN(3)], rng.Int64N(64000)
		want := 0.9*mix.Frag(gpuModel, cpu, left) + 0.1*mix.FragCopies(gpuModel, cpu, left)
		if got := newBlender(mix).blend(0.9, 0.1, gpuModel, cpu, left); got != want {
			t.Fatalf("trial %d: blender %v, Frag and FragCopies %v (mix %+v, left %v, cpu %d, model %s)", trial, got, want, mix, left, cpu, gpuModel)
		}
	}
}

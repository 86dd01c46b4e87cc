package main

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/corral-sched/corral/internal/placement"
)

func testNodes() []placement.Node {
	var nodes []placement.Node
	add := func(k int, m string, gpus int, cpu int64) {
		for i := 0; i < k; i++ {
			nodes = append(nodes, placement.Node{Name: fmt.Sprintf("%s-%d-%d", m, gpus, i), CPUMilli: cpu, MemoryMiB: 1 << 20, GPUs: gpus, Model: m})
		}
	}
	add(20, "G2", 8, 96000)
	add(2, "G3", 8, 128000)
	add(10, "T4", 2, 104000)
	add(12, "P100", 2, 64000) // more 2-GPU P100 nodes than T4 ones...
	add(3, "T4", 4, 96000)    // ...but more small T4 nodes in all
	add(2, "V100M16", 4, 32000)
	add(2, "V100M32", 8, 96000)
	add(1, "CPU", 0, 64000)
	return nodes
}

func TestSmallModel(t *testing.T) {
	if got := smallModel(testNodes()); got != "T4" {
		t.Errorf("small-node model %q, want T4", got)
	}
	same := []placement.Node{{Name: "a", GPUs: 8, Model: "B"}, {Name: "b", GPUs: 8, Model: "A"}}
	if got := smallModel(same); got != "A" {
		t.Errorf("one node size: %q, want A (tie to the name first in order)", got)
	}
}

func TestFamilies(t *testing.T) {
	for name, want := range map[string][2]string{
		"V100M16": {"V100", "V"}, "V100M32": {"V100", "V"}, "G2": {"G2", "G"},
		"A100-40G": {"A100", "A"}, "T4": {"T4", "T"}, "TPU": {"TPU", "TPU"},
	} {
		if got := [2]string{seriesKey(name), letterKey(name)}; got != want {
			t.Errorf("%s: keys %v, want %v", name, got, want)
		}
	}
	models := func(f fleet) [][]string {
		var out [][]string
		for _, fam := range f.families {
			out = append(out, fam.models)
		}
		return out
	}
	if got, want := models(newFleet(testNodes(), seriesKey)), [][]string{{"V100M16", "V100M32"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("series families %v, want %v", got, want)
	}
	if got, want := models(newFleet(testNodes(), letterKey)), [][]string{{"G2", "G3"}, {"V100M16", "V100M32"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("letter families %v, want %v", got, want)
	}
}

func testPods() []placement.Pod {
	var pods []placement.Pod
	shapes := []placement.Pod{
		{NumGPU: 1, GPUMilli: 1000, CPUMilli: 8000},
		{NumGPU: 1, GPUMilli: 500, CPUMilli: 4000},
		{NumGPU: 2, GPUMilli: 1000, CPUMilli: 16000},
		{NumGPU: 8, GPUMilli: 1000, CPUMilli: 64000},  // a family or nothing
		{NumGPU: 8, GPUMilli: 1000, CPUMilli: 120000}, // only G3: nothing in series mode
		{CPUMilli: 4000},
	}
	for i := 0; i < 600; i++ {
		p := shapes[i%len(shapes)]
		p.Name = fmt.Sprintf("p%03d", i)
		p.MemoryMiB = 1024
		pods = append(pods, p)
	}
	return pods
}

func TestRestrict(t *testing.T) {
	nodes := testNodes()
	for _, key := range []func(string) string{seriesKey, letterKey} {
		f := newFleet(nodes, key)
		for _, share := range []float64{0.05, 0.33, 1} {
			pods := testPods()
			f.restrict(rand.New(rand.NewSource(1)), pods, share, 0.7)
			again := testPods()
			f.restrict(rand.New(rand.NewSource(1)), again, share, 0.7)
			if !reflect.DeepEqual(pods, again) {
				t.Fatalf("share %v: two draws with one seed differ", share)
			}
			restricted, small, smallable, gpuPods := 0, 0, 0, 0
			for _, p := range pods {
				if !p.IsGPU() {
					if len(p.Models) > 0 {
						t.Fatalf("CPU-only pod %s restricted", p.Name)
					}
					continue
				}
				gpuPods++
				if len(p.Models) == 0 {
					continue
				}
				restricted++
				if p.NumGPU <= 2 {
					smallable++ // T4 and a family can hold it
				}
				if p.ModelSpec() == "T4" {
					small++
				}
				if !f.fits(p, p.Models) {
					t.Errorf("share %v: pod %s (%d GPUs, %d CPU) restricted to %s, which cannot hold it", share, p.Name, p.NumGPU, p.CPUMilli, p.ModelSpec())
				}
			}
			want := int(share*float64(gpuPods) + 0.5)
			if share == 1 {
				want = restricted // as many as can be
				if key("G3") == "G3" && restricted != gpuPods-100 {
					t.Errorf("series, share 1: %d restricted, want all but the 100 G3-only pods", restricted)
				}
			}
			if restricted != want {
				t.Errorf("share %v: %d of %d GPU pods restricted, want %d", share, restricted, gpuPods, want)
			}
			if share == 0.33 && (small < smallable/2 || small == smallable) {
				t.Errorf("share %v: %d of %d restricted pods that T4 can hold name T4, want most but not all", share, small, smallable)
			}
		}
	}
}

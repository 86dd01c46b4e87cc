package placement

import (
	"encoding/json"
	"math"
	"math/rand"
	"reflect"
	"testing"
)

// TestLearnedResumesTheLearner persists what a learner has learned part
// way through a stream of pods (as JSON, as a face writes it), gives it
// to a fresh learner, and feeds both the rest: every placement the policy
// makes on the resumed learner equals the one on the original, as does
// what each has learned after every pod. A fresh learner that is not
// given the learned mix places some pods differently.
func TestLearnedResumesTheLearner(t *testing.T) {
	models := []string{"A", "B"}
	differed := 0
	for trial := range 10 {
		rng := rand.New(rand.NewSource(int64(trial)))
		pods := randomPods(rng, 400, models)
		var nodes []Node
		for i := range 24 {
			nodes = append(nodes, gpuNode("", int64(32000+16000*(i%3)), []int{4, 8}[i%2], models[i%2]))
		}
		cut := 130 + rng.Intn(40) // between renewals
		original := NewLearner()
		for i := range pods[:cut] {
			original.Observe(&pods[i])
		}
		data, err := json.Marshal(original.Learned())
		if err != nil {
			t.Fatal(err)
		}
		var learned Learned
		if err := json.Unmarshal(data, &learned); err != nil {
			t.Fatal(err)
		}
		resumed, fresh := NewLearner(), NewLearner()
		if err := resumed.Learn(learned); err != nil {
			t.Fatal(err)
		}
		cs := []*Cluster{NewCluster(nodes), NewCluster(nodes), NewCluster(nodes)}
		ps := []*Corral{NewCorralLearning(original), NewCorralLearning(resumed), NewCorralLearning(fresh)}
		ls := []*Learner{original, resumed, fresh}
		for i := cut; i < len(pods); i++ {
			pod := &pods[i]
			var chosen [3]Choice
			for k := range ls {
				ls[k].Observe(pod)
				feasible := fitting(cs[k], pod)
				if len(feasible) == 0 {
					chosen[k] = Choice{Node: -1}
					continue
				}
				chosen[k] = ps[k].Place(cs[k], pod, feasible)
				cs[k].Bind(*pod, chosen[k])
			}
			if !reflect.DeepEqual(chosen[0], chosen[1]) {
				t.Fatalf("trial %d, pod %d: resumed learner placed %+v, the original %+v", trial, i, chosen[1], chosen[0])
			}
			if !reflect.DeepEqual(original.Learned(), resumed.Learned()) {
				t.Fatalf("trial %d, pod %d: resumed learner learned otherwise", trial, i)
			}
			if !reflect.DeepEqual(chosen[0], chosen[2]) {
				differed++
			}
		}
	}
	if differed == 0 {
		t.Error("a fresh learner placed every pod as the original: the test shows nothing")
	}
}

func TestLearnRefusesWhatNoLearnerWrites(t *testing.T) {
	shape := Shape{CPUMilli: 1000, NumGPU: 1, GPUMilli: 1000, Weight: 1}
	for name, bad := range map[string]Learned{
		"renewed after seen": {Seen: 1, Renewed: 2},
		"shapes unseen":      {Shapes: []Shape{shape}},
		"a shape twice":      {Seen: 2, Shapes: []Shape{shape, shape}},
		"negative weight":    {Seen: 1, Shapes: []Shape{{NumGPU: 1, Weight: -1}}},
		"NaN in the mix":     {Seen: 1, Shapes: []Shape{shape}, Mix: []Shape{{Weight: math.NaN()}}},
	} {
		l := NewLearner()
		before := l.Learned()
		if err := l.Learn(bad); err == nil {
			t.Errorf("%s: learned", name)
		}
		if !reflect.DeepEqual(l.Learned(), before) {
			t.Errorf("%s: a refused mix changed the learner", name)
		}
	}
}

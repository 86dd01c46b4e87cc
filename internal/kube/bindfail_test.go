package kube

import (
	"errors"
	"sync"
	"testing"
)

// A single pod's binding fails in the background, while the next cycle
// already counts it bound (assumed): the next cycles forget it and place
// it again, on the GPUs its failed binding held. The node has exactly the
// room for both pods, so a failed binding whose GPUs stayed held in the
// kept state would leave the pod waiting for good.
func TestAFailedBackgroundBindIsPlacedAgain(t *testing.T) {
	e := newEnv(t)
	e.node("a", 8, nil)
	s := e.newScheduler(e.config())
	var mu sync.Mutex
	tries := map[string]int{}
	refused := errors.New("the API server refused the binding")
	s.beforeBind = func(b binding) error {
		mu.Lock()
		defer mu.Unlock()
		tries[b.pod.Name]++
		if b.pod.Name == "first" && tries["first"] == 1 {
			return refused
		}
		return nil
	}
	e.startScheduler(s)
	e.create(pod("first", 4), pod("second", 4))
	nodes := e.waitBound("first", "second")
	if nodes["first"] != "a" || nodes["second"] != "a" {
		t.Fatalf("bound on %v, want both on a", nodes)
	}
	mu.Lock()
	defer mu.Unlock()
	if tries["first"] != 2 || tries["second"] != 1 {
		t.Fatalf("binding tries %v, want first twice (its first refused) and second once", tries)
	}
	if got := e.gpusPerNode()["a"]; got != 8 {
		t.Fatalf("node a holds %d GPUs of bound pods, want 8", got)
	}
}

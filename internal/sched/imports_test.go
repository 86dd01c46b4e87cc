package sched

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreStaysPure keeps the cycle and everything it builds on free of
// I/O, clocks' owners and faces: no os, net, store, executor or client-go
// anywhere in its dependencies, so every face can call it and a test can
// replay it.
func TestCoreStaysPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	forbidden := []string{"net", "os/exec", "net/http", "go.etcd.io/bbolt", "k8s.io/"}
	const own = "github.com/corral-sched/corral/internal/"
	allowed := map[string]bool{"sched": true, "gang": true, "placement": true, "model": true, "fleet": true, "job": true, "gpu": true, "queue": true, "quantity": true}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
				t.Errorf("the core depends on %s", dep)
			}
		}
		if rest, ok := strings.CutPrefix(dep, own); ok && !allowed[strings.Split(rest, "/")[0]] {
			t.Errorf("the core depends on %s, a face or a tool", dep)
		}
	}
}

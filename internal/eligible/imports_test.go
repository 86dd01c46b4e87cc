package eligible

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRulesArePure keeps the rules free of the network, processes and
// the server: no net, no os/exec, no corral package (the store, the
// server), so that they are what their table tests say.
func TestRulesArePure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == "net" || strings.HasPrefix(dep, "net/") || dep == "os/exec":
			t.Errorf("the rules depend on %s", dep)
		case strings.HasPrefix(dep, "github.com/corral-sched/corral/") && dep != "github.com/corral-sched/corral/internal/eligible":
			t.Errorf("the rules depend on %s", dep)
		}
	}
}

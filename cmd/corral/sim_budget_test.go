package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/workload"
)

// budgetMonth is a month of work as a jobs file: corral's four-tenant
// workload generator, 30 days on 8 synthetic nodes at load 0.8, seed 1
// (a generated month, not a site's record); -update rewrites it.
const budgetMonth = "testdata/budget-month.csv"

func budgetMonthFile() ([]byte, error) {
	f, err := fleet.Synthetic{Nodes: 8, MIG: fleet.MIGDynamic}.Build()
	if err != nil {
		return nil, err
	}
	spec, err := workload.DefaultFourTenants(30*24*time.Hour).ForLoad(f.GPUs(), 0.8)
	if err != nil {
		return nil, err
	}
	spec.Sharing = workload.SharingMIG
	w, err := workload.Generate(spec, 1)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("# corral's four-tenant workload generator: 30 days on 8 nodes, load 0.8, seed 1 (go test ./cmd/corral -run BudgetMonth -update)\n")
	err = workload.WriteJobs(&b, &w, nil)
	return b.Bytes(), err
}

func TestBudgetMonthFixture(t *testing.T) {
	want, err := budgetMonthFile()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(budgetMonth, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(budgetMonth); err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is not what the generator writes (go test -run %s -update): %v", budgetMonth, t.Name(), err)
	}
}

// TestSimBudgetWhatIf replays the month with a monthly budget for
// research: the report lists each period's use against the budget, the
// jobs held and the GPU-hours moved into the next period (golden file).
func TestSimBudgetWhatIf(t *testing.T) {
	args := []string{"sim", "--workload", "jobs", budgetMonth, "--nodes", "8", "--policies", "corral"}
	out, errOut, code := runCLI(t, append(args, "--budget", "research=4000/720h")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, section, ok := strings.Cut(out, "\nbudgets (")
	if !ok {
		t.Fatalf("no budget section:\n%s", out)
	}
	section, _, _ = strings.Cut(section, "\n\n")
	section = "budgets (" + section + "\n"
	golden := filepath.Join("testdata", "sim-budget.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(section), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if section != string(want) {
		t.Errorf("budget section differs from %s (go test -run %s -update):\n%s", golden, t.Name(), section)
	}
	if free, _, _ := runCLI(t, args...); strings.Contains(free, "\nbudgets (") {
		t.Errorf("a replay without --budget reports budgets")
	}
}

func TestSimBudgetFlagRefusesBadInput(t *testing.T) {
	for _, arg := range []string{"research", "research=10", "research=ten/720h", "research=-1/720h", "research=10/week", "research=10/30m", "=10/720h"} {
		_, errOut, code := runCLI(t, "sim", "--nodes", "1", "--days", "1", "--budget", arg)
		if code != 2 || !strings.Contains(errOut, "budget") {
			t.Errorf("--budget %s: exit %d, %q; want 2 and an error naming the budget", arg, code, errOut)
		}
	}
	_, errOut, code := runCLI(t, "sim", "--nodes", "1", "--days", "1", "--budget", "a=1/24h", "--budget", "a=2/24h")
	if code != 2 || !strings.Contains(errOut, "a has a budget already") {
		t.Errorf("a budget given twice: exit %d, %q", code, errOut)
	}
}

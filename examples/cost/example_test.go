// Package costexample holds the worked cost example: run.sh makes its
// files with corral sim --moves and corral prices; this test fails when
// the code would now print something else.
package costexample

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/moves"
)

// The committed table is what corral sim --moves --nodes 32 --days 14
// --seed 1 --now 2026-12-01 --prices discount.yaml prints today.
func TestMovesTableIsCurrent(t *testing.T) {
	w, label, err := moves.Generated(32, 14, 0.8, 1)
	if err != nil {
		t.Fatal(err)
	}
	base, err := price.Default()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("discount.yaml")
	if err != nil {
		t.Fatal(err)
	}
	over, err := price.Parse(data, "discount.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cat := price.Merge(base, over)
	now, _ := time.Parse(time.DateOnly, "2026-12-01")
	rep, err := moves.Run(moves.Options{Workload: w, Label: label, Nodes: 32, Catalog: cat, Seed: 1, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	rep.Write(&got)
	got.WriteString("\nreport written to report.html\n")
	want, err := os.ReadFile("moves.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("moves.txt is not what the code prints now; run ./run.sh and update README.md:\n%s", got.String())
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(got.String(), "\n")[3:12] {
		if !strings.Contains(string(readme), line) {
			t.Errorf("README.md does not quote the row %q", line)
		}
	}
}

// prices.txt lists every figure of the catalog with its date.
func TestPricesListIsCurrent(t *testing.T) {
	cat, err := price.Default()
	if err != nil {
		t.Fatal(err)
	}
	now, _ := time.Parse(time.DateOnly, "2026-12-01")
	lines, err := cat.Lines(now)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("prices.txt")
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(string(data), "\n")
	for _, l := range lines {
		capacity := string(l.Capacity)
		if capacity == "" {
			capacity = "interruption"
		}
		found := false
		for _, r := range rows {
			f := strings.Fields(r)
			if len(f) > 7 && f[1] == l.Instance && f[4] == capacity && strings.Contains(r, l.Seen) && strings.Contains(r, l.Source) {
				found = true
			}
		}
		if !found {
			t.Errorf("prices.txt lacks %s %s (data of %s); run ./run.sh", l.Instance, capacity, l.Seen)
		}
	}
}

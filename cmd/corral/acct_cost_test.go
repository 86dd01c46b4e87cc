package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/cost/focus"
)

// kubeLogFixture is a kube-scheduler accounting log (testdata/acct-kube.jsonl):
// queue research runs an 8-GPU H100 training pod for 10 hours and a MIG
// notebook of namespace web; queue serving runs 2 H100s for 4 hours.
const kubeLogFixture = "testdata/acct-kube.jsonl"

// checkGolden compares out with testdata/name, rewritten with -update.
func checkGolden(t *testing.T, name, out string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil || string(want) != out {
		t.Errorf("output differs from %s (go test -run %s -update rewrites it): %v\n%s", path, t.Name(), err, out)
	}
}

// corral acct --kube-log --price bills per queue: used cost at the price,
// the idle capacity on its own __idle__ line, and the lines add up to the
// capacity's cost ($25.80 of A100s and $628.80 of H100s).
func TestAcctKubeBillPerQueue(t *testing.T) {
	args := []string{"acct", "--kube-log", kubeLogFixture, "--price", "H100=3.93,A100=1.29", "--capacity", "H100=16,A100-80GB=2"}
	out, errOut, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	checkGolden(t, "acct-bill-kube.golden", out)
	for _, want := range []string{"research  H100-80GB  80.0000    314.40", "serving   H100-80GB  8.0000     31.44",
		"__idle__  H100-80GB  72.0000    0.00      282.96", "total                                                           654.60"} {
		if !strings.Contains(out, want) {
			t.Errorf("bill lacks %q", want)
		}
	}
	csv, _, code := runCLI(t, append(args, "--csv", "--by", "namespace", "--idle", "share")...)
	want := "namespace,gpu_model,gpu_hours,used_usd,idle_usd,shared_usd,total_usd\n" +
		"ml,H100-80GB,80.0000,314.40,257.24,0.00,571.64\n" +
		"web,A100-80GB,0.7143,0.92,24.88,0.00,25.80\n" +
		"web,H100-80GB,8.0000,31.44,25.72,0.00,57.16\n"
	if code != 0 || csv != want {
		t.Errorf("--csv --by namespace --idle share:\n%s\nwant\n%s", csv, want)
	}
}

// The FOCUS export of the Kubernetes bill validates against the columns
// corral claims, and its BilledCost is the bill's total; --check-focus
// says so, and refuses a file with a column missing.
func TestAcctKubeFOCUSExport(t *testing.T) {
	out, errOut, code := runCLI(t, "acct", "--kube-log", kubeLogFixture, "--price", "H100=3.93,A100=1.29", "--capacity", "H100=16,A100-80GB=2",
		"--shared-cost", "100", "--format", "focus")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	sum, err := focus.Validate(strings.NewReader(out), "export")
	if err != nil || sum.BilledUSD() != "754.60" {
		t.Fatalf("export: %v, BilledCost %v, want 754.60 (654.60 of GPUs and 100 shared)", err, sum.BilledCost)
	}
	path := filepath.Join(t.TempDir(), "focus.csv")
	os.WriteFile(path, []byte(out), 0o644)
	if got, _, code := runCLI(t, "acct", "--check-focus", path); code != 0 || !strings.Contains(got, "7 rows, BilledCost 754.60") {
		t.Errorf("--check-focus: exit %d: %q", code, got)
	}
	os.WriteFile(path, []byte(strings.Replace(out, "BillingCurrency", "Currency", 1)), 0o644)
	if _, errOut, code := runCLI(t, "acct", "--check-focus", path); code == 0 || !strings.Contains(errOut, "focus.csv:1: missing column BillingCurrency") {
		t.Errorf("--check-focus of a broken file: exit %d: %q", code, errOut)
	}
}

// A model with no price is refused by name, never billed at $0; so are a
// bill with no capacity, use above capacity and bad flags.
func TestAcctBillRefuses(t *testing.T) {
	base := []string{"acct", "--kube-log", kubeLogFixture}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing price", []string{"--price", "H100=3.93", "--capacity", "H100=16,A100=2"}, 1, "no price for GPU model A100-80GB"},
		{"missing price in the catalog", []string{"--price", "catalog", "--capacity", "H100=16,A100=2,GH200=1"}, 1, "no price for GPU model GH200"},
		{"no capacity", []string{"--price", "H100=3.93,A100=1.29"}, 2, "--price needs the fleet's capacity"},
		{"capacity missing a model", []string{"--price", "H100=3.93,A100=1.29", "--capacity", "H100=16"}, 1, "no capacity for GPU model A100-80GB"},
		{"use above capacity", []string{"--price", "H100=3.93,A100=1.29", "--capacity", "H100=4,A100=2"}, 1, "88.0000 GPU-hours used exceed the capacity of 4 GPUs"},
		{"bad price", []string{"--price", "H100=free", "--capacity", "H100=16"}, 2, `--price "H100=free": want MODEL=NUMBER`},
		{"focus without a price", []string{"--format", "focus"}, 2, "--format focus needs --price"},
		{"unknown format", []string{"--format", "xml"}, 2, `--format "xml"`},
		{"a rate without the catalog", []string{"--price", "H100=3.93", "--rate", "spot"}, 2, "need --price catalog"},
		{"a job filter", []string{"--price", "H100=3.93", "-j", "ml/train-0"}, 2, "does not take --job"},
		{"unknown idle mode", []string{"--price", "H100=3.93,A100=1.29", "--capacity", "H100=16,A100=2", "--idle", "spread"}, 1, `idle "spread"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, append(base, c.args...)...)
			if code != c.code || !strings.Contains(errOut, c.want) || strings.Contains(out, "0.00") {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q; want it to contain %q", code, c.code, out, errOut, c.want)
			}
		})
	}
}

// A pod with a start record and no end yet is billed up to the log's last
// record, and the table says so.
func TestAcctKubeBillCountsRunningPods(t *testing.T) {
	log := `{"event":"start","time":"2026-11-01T00:00:00Z","pod":"ml/train-0","queue":"research","tenant":"ml","gpuModel":"H100-80GB","gpus":4}
{"event":"start","time":"2026-11-01T02:00:00Z","pod":"web/a","queue":"serving","tenant":"web","gpuModel":"H100-80GB","gpus":1}
{"event":"end","time":"2026-11-01T04:00:00Z","pod":"web/a","queue":"serving","tenant":"web","gpuModel":"H100-80GB","gpus":1,"runSeconds":7200,"phase":"Succeeded"}
`
	path := filepath.Join(t.TempDir(), "acct.jsonl")
	os.WriteFile(path, []byte(log), 0o644)
	out, errOut, code := runCLI(t, "acct", "--kube-log", path, "--price", "H100=2", "--capacity", "H100=8", "--csv")
	want := "queue,gpu_model,gpu_hours,used_usd,idle_usd,shared_usd,total_usd\n" +
		"research,H100-80GB,16.0000,32.00,0.00,0.00,32.00\n" +
		"serving,H100-80GB,2.0000,4.00,0.00,0.00,4.00\n" +
		"__idle__,H100-80GB,14.0000,0.00,28.00,0.00,28.00\n"
	if code != 0 || out != want {
		t.Errorf("exit %d (%s):\n%s\nwant\n%s", code, errOut, out, want)
	}
	if out, _, _ := runCLI(t, "acct", "--kube-log", path, "--price", "H100=2", "--capacity", "H100=8"); !strings.Contains(out, "1 run not ended yet is counted up to 2026-11-01T04:00:00Z") {
		t.Errorf("the table does not say a pod is still running:\n%s", out)
	}
}

// --price catalog takes the catalog's prices with a negotiated-rates file
// laid over it (corral prices import --format negotiated), at the
// capacity type --rate names: 16 H100s for 10 hours at the imported
// reserved-1y rate of a p5.48xlarge ($33.50 an hour for 8 GPUs) cost
// $670.00. A model the rate has no price for is refused by name.
func TestAcctBillNegotiatedRates(t *testing.T) {
	dir := t.TempDir()
	rates, errOut, code := runCLI(t, "prices", "import", "--format", "negotiated", "../../internal/cost/priceimport/testdata/negotiated.csv")
	if code != 0 {
		t.Fatalf("prices import: exit %d: %s", code, errOut)
	}
	ratesFile := filepath.Join(dir, "rates.yaml")
	os.WriteFile(ratesFile, []byte(rates), 0o644)
	log := filepath.Join(dir, "acct.jsonl")
	os.WriteFile(log, []byte(`{"event":"end","time":"2026-11-01T10:00:00Z","pod":"ml/a","queue":"research","tenant":"ml","gpuModel":"H100-80GB","gpus":8,"runSeconds":36000}`+"\n"), 0o644)
	args := []string{"acct", "--kube-log", log, "--price", "catalog", "--prices", ratesFile, "--rate", "reserved-1y", "--capacity", "H100=16", "--csv"}
	out, errOut, code := runCLI(t, args...)
	want := "queue,gpu_model,gpu_hours,used_usd,idle_usd,shared_usd,total_usd\n" +
		"research,H100-80GB,80.0000,335.00,0.00,0.00,335.00\n" +
		"__idle__,H100-80GB,80.0000,0.00,335.00,0.00,335.00\n"
	if code != 0 || out != want {
		t.Errorf("exit %d (%s):\n%s\nwant\n%s", code, errOut, out, want)
	}
	if _, errOut, code := runCLI(t, append(args, "--capacity", "H100=16,L4=2")...); code != 1 || !strings.Contains(errOut, "no price for GPU model L4") {
		t.Errorf("L4 at reserved-1y: exit %d, %q", code, errOut)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/faultrec"
	"github.com/corral-sched/corral/internal/kube"
)

// The accounting log of corral kube-scheduler answers corral acct like a
// server: the pods that ended as records, and the hourly demand that
// corral plan reads.
func TestAcctFromKubeLog(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	lines := []kube.Record{
		{Event: "start", Time: t0, Pod: "ml/a-0", Tenant: "ml", GPUModel: "H100-80GB", GPUs: 8},
		{Event: "end", Time: t0.Add(90 * time.Minute), Pod: "ml/a-0", Group: "ml/a", Tenant: "ml", GPUModel: "H100-80GB", GPUs: 8,
			RunSeconds: 5400, GPUSeconds: 8 * 5400, Phase: "Succeeded"},
		{Event: "end", Time: t0.Add(2 * time.Hour), Pod: "web/b", Tenant: "web", GPUModel: "A100-80GB", MIGProfile: "1g.10gb", GPUs: 1.0 / 7,
			RunSeconds: 3600, GPUSeconds: 3600.0 / 7, Phase: "Deleted"},
	}
	path := filepath.Join(t.TempDir(), "acct.jsonl")
	var b strings.Builder
	for _, l := range lines {
		data, _ := json.Marshal(l)
		b.Write(append(data, '\n'))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "acct", "--kube-log", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"ml/a-0", "Succeeded", "12.0000", "web/b", "1g.10gb"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	demand, _, code := runCLI(t, "acct", "--kube-log", path, "--demand")
	want := "hour,gpu_model,gpus\n0,A100-80GB,0.0000\n0,H100-80GB,8.0000\n1,A100-80GB,0.1429\n1,H100-80GB,4.0000\n"
	if code != 0 || demand != want {
		t.Errorf("demand:\n%s\nwant\n%s", demand, want)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("{\"event\":\"end\"}\nnot json\n"), 0o644)
	if _, errOut, code := runCLI(t, "acct", "--kube-log", bad); code == 0 || !strings.Contains(errOut, "bad.jsonl:2") {
		t.Errorf("bad log: exit %d, %q", code, errOut)
	}
}

// Fault lines in the log (faultrec records, as corral sim keeps them) are
// summed up below the table, and leave the demand alone.
func TestAcctFromKubeLogSumsFaults(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	end, _ := json.Marshal(kube.Record{Event: "end", Time: t0.Add(time.Hour), Pod: "ml/w-0", Tenant: "ml", GPUModel: "H100-80GB", GPUs: 8,
		RunSeconds: 3600, GPUSeconds: 8 * 3600, Phase: "Deleted"})
	fault, _ := json.Marshal(faultrec.Record{Event: faultrec.Event, Time: t0.Add(time.Hour), Kind: faultrec.NodeFailure, Node: "a2",
		Work: "ml/train", Action: faultrec.Replaced, To: "s1", GPUs: 16, LostGPUHours: 8, RecoverySeconds: 0.045})
	path := filepath.Join(t.TempDir(), "acct.jsonl")
	if err := os.WriteFile(path, []byte(string(end)+"\n"+string(fault)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "acct", "--kube-log", path)
	want := "faults: 1 stopped or moved by faults (node-failure 1): 1 moved to a spare or free node, 0 requeued; 8.0 GPU-hours lost; decided 45ms after the fault (median)"
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "ml/w-0") {
		t.Errorf("exit %d (%s):\n%s\nwant the table and %q", code, errOut, out, want)
	}
}

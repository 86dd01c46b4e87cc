package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// movesDoc is the part of the --moves JSON these tests read.
type movesDoc struct {
	Model    string `json:"gpu_model"`
	Offer    string `json:"offer"`
	Provider string `json:"provider"`
	Skipped  []struct {
		Move string `json:"move"`
		Why  string `json:"why"`
	} `json:"skipped_moves"`
	Moves []struct {
		Name string `json:"move"`
	} `json:"moves"`
	Baseline struct {
		Prices []struct {
			Provider string `json:"provider"`
			Instance string `json:"instance"`
		} `json:"catalog_lines"`
	} `json:"baseline"`
}

// runMovesJSON runs a small corral sim --moves and reads its JSON.
func runMovesJSON(t *testing.T, args ...string) (string, movesDoc) {
	t.Helper()
	jsonPath := filepath.Join(t.TempDir(), "moves.json")
	out, errOut, code := runCLI(t, append([]string{"sim", "--moves", "--days", "2", "--now", "2026-12-01", "--json", jsonPath}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	var doc movesDoc
	readJSONFile(t, jsonPath, &doc)
	return out, doc
}

func (d movesDoc) moved(name string) bool {
	for _, m := range d.Moves {
		if m.Name == name {
			return true
		}
	}
	return false
}

func (d movesDoc) skipped(name string) string {
	for _, s := range d.Skipped {
		if s.Move == name {
			return s.Why
		}
	}
	return ""
}

// --gpu-model L4 prices the moves on the catalog's L4 offer, and skips
// the MIG move (the L4 has no MIG) with the reason, in text and JSON.
func TestSimMovesGPUModel(t *testing.T) {
	out, doc := runMovesJSON(t, "--nodes", "8", "--gpu-model", "l4")
	for _, want := range []string{"nodes of 8 L4", "priced as aws g6.xlarge us-east-1", "mig            skipped: L4 has no MIG",
		"aws g6.xlarge us-east-1 on-demand: $0.805 per GPU-hour"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if doc.Model != "L4" || doc.Offer != "aws g6.xlarge us-east-1" || doc.moved("mig") || !strings.Contains(doc.skipped("mig"), "no MIG") {
		t.Errorf("report: model %q, offer %q, skipped %+v, mig replayed %v", doc.Model, doc.Offer, doc.Skipped, doc.moved("mig"))
	}
	if _, doc := runMovesJSON(t, "--nodes", "8", "--gpu-model", "A100-40GB"); !doc.moved("mig") || doc.Offer != "aws p4d.24xlarge us-east-1" {
		t.Errorf("A100-40GB has MIG: moves %+v, offer %q", doc.Moves, doc.Offer)
	}
}

// A model, offer or provider the catalog cannot price is refused with
// exit 2 and one line naming what the catalog has.
func TestSimMovesUnpricedRefused(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--gpu-model", "Z9"}, "offers exist for: A100-40GB, A100-80GB, A10G, H100-80GB, H200-141GB, L4, L40S, T4"},
		{[]string{"--gpu-model", "B200"}, `no offer for GPU model "B200-180GB"`},
		{[]string{"--gpu-model", "L4", "--offer", "g5"}, "families: g6"},
		{[]string{"--provider", "oracle"}, "providers: aws, azure, gcp"},
		{[]string{"--provider", "azure", "--gpu-model", "L4"}, "provider azure: price not known: no offer for GPU model \"L4\" (offers exist for: A100-80GB, H100-80GB)"},
		// The catalog's GCP H100 is a spot price only: no baseline.
		{[]string{"--provider", "gcp"}, "the baseline is on-demand: price not known: gcp a3-highgpu-1g us-central1 (H100-80GB-SXM) is not sold as on-demand"},
	}
	for _, tt := range tests {
		_, errOut, code := runCLI(t, append([]string{"sim", "--moves", "--nodes", "8", "--days", "2"}, tt.args...)...)
		if code != 2 || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 2 {
			t.Errorf("%v: exit %d, want 2 and one line with %q:\n%s", tt.args, code, tt.want, errOut)
		}
	}
}

// With --moves, --fleet gives the GPU model and, in 8-GPU nodes, the
// size; a fleet of two models is refused, naming both.
func TestSimMovesFleetModel(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "l4.yaml")
	os.WriteFile(one, []byte("levels: [rack]\npools:\n  - name: l4\n    nodes: 6\n    gpuModel: L4\n    gpusPerNode: 8\n    cpu: 192\n    memory: 1Ti\n    perDomain: {rack: 6}\n"), 0o644)
	out, doc := runMovesJSON(t, "--fleet", one)
	for _, want := range []string{"L4 from --fleet " + one + ", 6 nodes of 8 GPUs", "pools of up to 24 nodes of 8 L4", "priced as aws g6.xlarge"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if doc.Model != "L4" {
		t.Errorf("model %q, want the fleet's L4", doc.Model)
	}
	two := filepath.Join("..", "..", "examples", "fleets", "two-models.yaml")
	_, errOut, code := runCLI(t, "sim", "--moves", "--fleet", two)
	if code != 2 || !strings.Contains(errOut, "has H100-80GB, H200-141GB") {
		t.Errorf("two-model fleet: exit %d: %s", code, errOut)
	}
	_, errOut, code = runCLI(t, "sim", "--moves", "--fleet", one, "--gpu-model", "T4")
	if code != 2 || !strings.Contains(errOut, "--gpu-model T4, but the GPUs of --fleet") {
		t.Errorf("--gpu-model against the fleet: exit %d: %s", code, errOut)
	}
}

// --provider picks the provider's offer: Azure's H100 from the catalog
// (no spot price known, so the spot move is skipped and said so), and
// GCP's from a catalog imported from a Cloud Billing Catalog fixture,
// priced with its on-demand, spot and 1-year commitment.
func TestSimMovesProvider(t *testing.T) {
	out, doc := runMovesJSON(t, "--nodes", "8", "--provider", "azure")
	if doc.Provider != "azure" || doc.Offer != "azure Standard_ND96isr_H100_v5 eastus" || doc.moved("spot") || !strings.Contains(doc.skipped("spot"), "no spot price known") {
		t.Errorf("azure: provider %q, offer %q, skipped %+v", doc.Provider, doc.Offer, doc.Skipped)
	}
	if !strings.Contains(out, "spot           skipped: no spot price known for azure Standard_ND96isr_H100_v5 eastus") {
		t.Errorf("azure output does not say spot was skipped:\n%s", out)
	}
	prices := filepath.Join(t.TempDir(), "gcp.yaml")
	fixture := filepath.Join("..", "..", "internal", "cost", "priceimport", "testdata", "gcp-skus.json")
	if _, errOut, code := runCLI(t, "prices", "import", "--format", "gcp", "--seen", "2026-11-25", "--out", prices, fixture); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
	out, doc = runMovesJSON(t, "--nodes", "8", "--provider", "gcp", "--offer", "gpu-h100-80gb", "--prices", prices)
	for _, want := range []string{"priced as gcp gpu-h100-80gb us-central1", "gcp gpu-h100-80gb us-central1 on-demand: $9.796",
		"gcp gpu-h100-80gb us-central1 reserved-1y: $6.857", "used by [floor-1y all]"} {
		if !strings.Contains(out, want) {
			t.Errorf("gcp output lacks %q:\n%s", want, out)
		}
	}
	if doc.Provider != "gcp" || !doc.moved("spot") || len(doc.Baseline.Prices) != 1 || doc.Baseline.Prices[0].Instance != "gpu-h100-80gb" {
		t.Errorf("gcp: provider %q, baseline lines %+v", doc.Provider, doc.Baseline.Prices)
	}
}

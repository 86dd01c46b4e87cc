package server

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// extraRoutes are served outside the route table.
var extraRoutes = []string{"GET /metrics", "GET /"}

// TestOpenAPIMatchesRoutes fails when the server serves a path and method
// that api/openapi.yaml lacks, or the other way round.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi version %q, want 3.x", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" || method == "summary" || method == "description" {
				continue
			}
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	served := map[string]bool{}
	s := &Server{}
	for _, rt := range s.routes() {
		served[rt.method+" "+rt.path] = true
	}
	for _, r := range extraRoutes {
		served[r] = true
	}
	for _, r := range slices.Sorted(maps.Keys(served)) {
		if !documented[r] {
			t.Errorf("%s is served but not in api/openapi.yaml", r)
		}
	}
	for _, r := range slices.Sorted(maps.Keys(documented)) {
		if !served[r] {
			t.Errorf("%s is in api/openapi.yaml but not served", r)
		}
	}
}

package gpu

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestRegisterAddsAModelLookupFinds(t *testing.T) {
	if _, err := Lookup("NVIDIA-RTX-PRO-6000-Blackwell"); err == nil {
		t.Fatal("RTX-PRO-6000-Blackwell is in the catalog; pick another unknown model for this test")
	}
	m, err := Register("NVIDIA-RTX-PRO-6000-Blackwell", 97871)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "NVIDIA-RTX-PRO-6000-Blackwell" || m.MemoryMiB != 97871 || m.MIG {
		t.Errorf("registered %+v, want the name as given, 97871 MiB, no MIG", m)
	}
	for _, name := range []string{"NVIDIA-RTX-PRO-6000-Blackwell", "rtx-pro-6000-blackwell", "NVIDIA RTX PRO 6000 Blackwell"} {
		got, err := Lookup(name)
		if err != nil || got != m {
			t.Errorf("Lookup(%q) = %v, %v; want the registered model", name, got, err)
		}
	}
	again, err := Register("RTX PRO 6000 Blackwell", 97871)
	if err != nil || again != m {
		t.Errorf("registering again with the same memory: %v, %v; want the same model", again, err)
	}
	if _, err := Register("NVIDIA-RTX-PRO-6000-Blackwell", 1024); err == nil {
		t.Error("registering again with other memory: no error")
	}
	if slices.Contains(Models(), m) {
		t.Error("Models lists a registered model; it lists the catalog only")
	}
}

func TestRegisterRefusesCatalogAndEmptyNames(t *testing.T) {
	m, err := Register("NVIDIA-H100-80GB-HBM3", 1)
	if !errors.Is(err, ErrInCatalog) || m == nil || m.Name != "H100-80GB" || m.MemoryMiB != 81920 {
		t.Errorf("Register of a catalog name: %v, %v; want the catalog's H100-80GB and ErrInCatalog", m, err)
	}
	if _, err := Register("  ", 1); err == nil {
		t.Error("Register of an empty name: no error")
	}
	if _, err := Register("X-NEG", -1); err == nil {
		t.Error("Register with negative memory: no error")
	}
}

// Register and Lookup may run at once (go test -race checks).
func TestRegisterConcurrentWithLookup(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		name := fmt.Sprintf("TEST-CONCURRENT-%d", i)
		wg.Go(func() {
			if _, err := Register(name, 1024); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() { _, _ = Lookup(name) })
	}
	wg.Wait()
	for i := range 8 {
		if _, err := Lookup(fmt.Sprintf("test-concurrent-%d", i)); err != nil {
			t.Error(err)
		}
	}
}

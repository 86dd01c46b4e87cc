package discover

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestNVMLReal checks Discover on a machine with an NVIDIA driver against
// what nvidia-smi reports: the same GPUs in the same order with the same
// UUIDs, names, memory and MIG mode, the same MIG devices with the same
// profiles, the same NVLink peers, and the same health readings where
// nvidia-smi has them. It skips without a driver, unless
// CORRAL_NVML_REQUIRED=1 (then it fails):
//
//	CORRAL_NVML_REQUIRED=1 CGO_ENABLED=0 go test -count=1 -v -run 'NVMLReal|OnThisMachine' ./internal/discover
func TestNVMLReal(t *testing.T) {
	devices, err := Discover()
	if errors.Is(err, ErrNoDriver) {
		if os.Getenv("CORRAL_NVML_REQUIRED") == "1" {
			t.Fatalf("CORRAL_NVML_REQUIRED=1 and Discover found no driver (%v)", err)
		}
		t.Skip("no NVIDIA driver on this machine")
	}
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	for _, d := range devices {
		t.Logf("%v model=%q product=%q peers=%v health=%+v", d, d.Model, d.Product, d.NVLinkPeers, d.Health)
		for _, m := range d.MIGInstances {
			t.Logf("  %+v", m)
		}
	}
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		t.Skip("no nvidia-smi to compare with")
	}

	out := smi(t, "--query-gpu=index,uuid,name,memory.total,mig.mode.current", "--format=csv,noheader,nounits")
	rows := parseSMICSV(out)
	if len(rows) != len(devices) {
		t.Fatalf("Discover found %d GPUs, nvidia-smi %d:\n%s", len(devices), len(rows), out)
	}
	for i, d := range devices {
		r := rows[i]
		if len(r) != 5 {
			t.Fatalf("nvidia-smi row %q", r)
		}
		if r[0] != strconv.Itoa(d.Index) || r[1] != d.UUID || r[2] != d.Product {
			t.Errorf("GPU %d: Discover %d %s %q, nvidia-smi %q", i, d.Index, d.UUID, d.Product, r[:3])
		}
		if mib, err := strconv.ParseInt(r[3], 10, 64); err != nil || mib != d.MemoryMiB {
			t.Errorf("GPU %d: Discover %d MiB, nvidia-smi %q MiB", i, d.MemoryMiB, r[3])
		}
		if mig := r[4] == "Enabled"; mig != d.MIG {
			t.Errorf("GPU %d: Discover MIG %v, nvidia-smi MIG mode %q", i, d.MIG, r[4])
		}
		if d.Model == "" {
			t.Logf("GPU %d: %q is not in corral's catalog", i, d.Product)
		}
	}

	migs := parseSMIList(smi(t, "-L"))
	for i, d := range devices {
		var got []string
		for _, m := range d.MIGInstances {
			got = append(got, m.Profile+" "+m.UUID)
		}
		slices.Sort(got)
		want := migs[i]
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("GPU %d MIG devices: Discover %q, nvidia-smi -L %q", i, got, want)
		}
	}

	if out, err := exec.Command("nvidia-smi", "topo", "-p2p", "n").Output(); err == nil {
		peers := parseSMIP2P(string(out))
		for i, d := range devices {
			if i < len(peers) && !slices.Equal(d.NVLinkPeers, peers[i]) {
				t.Errorf("GPU %d NVLink peers: Discover %v, nvidia-smi topo -p2p n %v", i, d.NVLinkPeers, peers[i])
			}
		}
	} else {
		t.Logf("nvidia-smi topo -p2p n: %v (NVLink peers not compared)", err)
	}

	// Health: fields this nvidia-smi lacks, or reports as [N/A], are not
	// compared; the temperature may move between the two readings.
	if out, err := exec.Command("nvidia-smi", "--query-gpu=temperature.gpu,ecc.errors.uncorrected.volatile.total,remapped_rows.pending,remapped_rows.failure",
		"--format=csv,noheader,nounits").Output(); err == nil {
		for i, r := range parseSMICSV(string(out)) {
			if i >= len(devices) || len(r) != 4 {
				continue
			}
			h := devices[i].Health
			if c, err := strconv.Atoi(r[0]); err == nil && (c < h.TemperatureC-5 || c > h.TemperatureC+5) {
				t.Errorf("GPU %d: Discover %d°C, nvidia-smi %d°C", i, h.TemperatureC, c)
			}
			if n, err := strconv.ParseUint(r[1], 10, 64); err == nil && n != h.ECCUncorrected {
				t.Errorf("GPU %d: Discover %d uncorrected ECC errors, nvidia-smi %d", i, h.ECCUncorrected, n)
			}
			if yes, ok := smiBool(r[2]); ok && yes != h.RemapPending {
				t.Errorf("GPU %d: Discover remap pending %v, nvidia-smi %q", i, h.RemapPending, r[2])
			}
			if yes, ok := smiBool(r[3]); ok && yes != h.RemapFailed {
				t.Errorf("GPU %d: Discover remap failed %v, nvidia-smi %q", i, h.RemapFailed, r[3])
			}
		}
	} else {
		t.Logf("nvidia-smi health query: %v (health not compared)", err)
	}
}

func smi(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("nvidia-smi", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("nvidia-smi %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// parseSMICSV splits nvidia-smi's --format=csv,noheader output into
// trimmed fields. (Product names have no commas.)
func parseSMICSV(out string) [][]string {
	var rows [][]string
	for line := range strings.Lines(out) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Split(line, ",")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		rows = append(rows, fields)
	}
	return rows
}

// parseSMIList reads the MIG devices of nvidia-smi -L, "<profile> <UUID>"
// by GPU index:
//
//	GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)
//	  MIG 3g.40gb     Device  0: (UUID: MIG-...)
func parseSMIList(out string) map[int][]string {
	migs := map[int][]string{}
	gpu := -1
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		uuid := ""
		if i := strings.LastIndex(line, "(UUID: "); i >= 0 {
			uuid = strings.TrimSuffix(line[i+len("(UUID: "):], ")")
		}
		switch fields := strings.Fields(line); {
		case len(fields) >= 2 && fields[0] == "GPU":
			gpu, _ = strconv.Atoi(strings.TrimSuffix(fields[1], ":"))
		case len(fields) >= 2 && fields[0] == "MIG" && gpu >= 0:
			migs[gpu] = append(migs[gpu], fields[1]+" "+uuid)
		}
	}
	return migs
}

// parseSMIP2P reads the matrix of nvidia-smi topo -p2p n: row i lists the
// GPUs whose entry is OK.
//
//	       GPU0    GPU1
//	GPU0   X       OK
//	GPU1   OK      X
func parseSMIP2P(out string) [][]int {
	var peers [][]int
	for line := range strings.Lines(out) {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.HasPrefix(fields[0], "GPU") || strings.HasPrefix(fields[1], "GPU") {
			continue
		}
		row := []int{}
		for j, f := range fields[1:] {
			if f == "OK" {
				row = append(row, j)
			}
		}
		if len(row) == 0 {
			row = nil
		}
		peers = append(peers, row)
	}
	return peers
}

// smiBool reads nvidia-smi's Yes/No (or 1/0); ok is false for [N/A].
func smiBool(s string) (yes, ok bool) {
	switch strings.ToLower(s) {
	case "yes", "1", "true":
		return true, true
	case "no", "0", "false":
		return false, true
	}
	return false, false
}

// The parsers above on nvidia-smi's output, so that TestNVMLReal's
// comparisons are themselves tested where there is no GPU.
func TestNVIDIASMIParsers(t *testing.T) {
	rows := parseSMICSV("0, GPU-aaa, NVIDIA H200, 143771, Disabled\n1, GPU-bbb, NVIDIA H100 80GB HBM3, 81559, Enabled\n")
	if len(rows) != 2 || !slices.Equal(rows[1], []string{"1", "GPU-bbb", "NVIDIA H100 80GB HBM3", "81559", "Enabled"}) {
		t.Errorf("csv: %q", rows)
	}
	list := parseSMIList(`GPU 0: NVIDIA H200 (UUID: GPU-aaa)
GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-bbb)
  MIG 3g.40gb     Device  0: (UUID: MIG-ccc)
  MIG 1g.10gb     Device  1: (UUID: MIG-ddd)
`)
	if len(list) != 1 || !slices.Equal(list[1], []string{"3g.40gb MIG-ccc", "1g.10gb MIG-ddd"}) {
		t.Errorf("-L: %v", list)
	}
	p2p := parseSMIP2P(`
 	GPU0	GPU1	GPU2
 GPU0	X	OK	NS
 GPU1	OK	X	NS
 GPU2	NS	NS	X

Legend:

  X    = Self
  OK   = Status Ok
  NS   = Not supported
`)
	if want := [][]int{{1}, {0}, nil}; len(p2p) != 3 || !slices.Equal(p2p[0], want[0]) || !slices.Equal(p2p[1], want[1]) || p2p[2] != nil {
		t.Errorf("topo -p2p n: %v, want %v", p2p, want)
	}
	for s, want := range map[string][2]bool{"Yes": {true, true}, "No": {false, true}, "[N/A]": {false, false}} {
		if yes, ok := smiBool(s); yes != want[0] || ok != want[1] {
			t.Errorf("smiBool(%q) = %v, %v", s, yes, ok)
		}
	}
}

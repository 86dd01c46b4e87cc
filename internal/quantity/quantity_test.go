package quantity

import (
	"strings"
	"testing"
)

func TestCPU(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"192", 192000, ""},
		{"1.5", 1500, ""},
		{"0.125", 125, ""},
		{"250m", 250, ""},
		{"", 0, "required"},
		{"1.2345", 0, "want cores"},
		{"-1", 0, "want cores"},
		{"1e3", 0, "want cores"},
		{"99999999999999999999", 0, "too large"},
	} {
		got, err := CPU(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("CPU(%q) error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CPU(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestMemory(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"2048Gi", 2 << 20, ""},
		{"1Ti", 1 << 20, ""},
		{"512Mi", 512, ""},
		{"10GiB", 10240, ""},
		{"2048Ki", 2, ""},
		{"1000Ki", 0, "whole number of MiB"},
		{"16G", 0, "want an integer"},
		{"16", 0, "want an integer"},
		{"", 0, "required"},
		{"9999999999999999Ti", 0, "too large"},
	} {
		got, err := Memory(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Memory(%q) error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Memory(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestGPUMemory(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"600G", 600 << 10, ""},
		{"80GB", 80 << 10, ""},
		{"2T", 2 << 20, ""},
		{"640Gi", 640 << 10, ""},
		{"512Mi", 512, ""},
		{"600", 0, "600G"},
		{"1.5T", 0, "want an integer"},
		{"", 0, "required"},
	} {
		got, err := GPUMemory(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("GPUMemory(%q) error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("GPUMemory(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestByteRate(t *testing.T) {
	for in, want := range map[string]float64{"100MB/s": 100e6, "250MiB/s": 250 << 20, "1.5GB/s": 1.5e9, "512KiB/s": 512 << 10, "800B/s": 800} {
		if got, err := ByteRate(in); err != nil || got != want {
			t.Errorf("ByteRate(%q) = %g, %v; want %g", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "100", "100MB", "0MB/s", "-5MB/s", "fast", "100Mb/s", "9999999GB/s"} {
		if _, err := ByteRate(bad); err == nil {
			t.Errorf("ByteRate(%q): no error", bad)
		}
	}
}

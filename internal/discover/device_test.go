package discover

import (
	"slices"
	"testing"
)

func TestHealthProblems(t *testing.T) {
	tests := []struct {
		name   string
		health Health
		want   []string
	}{
		{"a cool GPU without errors", Health{TemperatureC: 45, SlowdownC: 87}, nil},
		{"no readings at all", Health{}, nil},
		{"uncorrected ECC errors", Health{ECCUncorrected: 3}, []string{"3 uncorrected ECC errors"}},
		{"a failed row remap and a pending one", Health{RemapFailed: true, RemapPending: true},
			[]string{"memory row remapping failed", "memory repair pending until the GPU is reset"}},
		{"pages waiting to be retired", Health{RetiredPagePending: true}, []string{"memory repair pending until the GPU is reset"}},
		{"at the slowdown temperature", Health{TemperatureC: 87, SlowdownC: 87},
			[]string{"at 87°C, at or above its slowdown temperature of 87°C"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.health.Problems()
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if tt.health.Healthy() != (len(tt.want) == 0) {
				t.Errorf("Healthy() = %v with problems %q", tt.health.Healthy(), got)
			}
		})
	}
}

func TestDeviceString(t *testing.T) {
	tests := []struct {
		device Device
		want   string
	}{
		{Device{Index: 0, Model: "H100-80GB", MemoryMiB: 81559, UUID: "GPU-1"}, "0 H100-80GB 81559MiB GPU-1"},
		{Device{Index: 3, Product: "NVIDIA L40", MemoryMiB: 46068, UUID: "GPU-2"}, `3 "NVIDIA L40" 46068MiB GPU-2`},
		{Device{Index: 1, Model: "A100-40GB", MemoryMiB: 40536, UUID: "GPU-3", MIG: true,
			MIGInstances: []MIGInstance{{UUID: "MIG-1"}, {UUID: "MIG-2"}}}, "1 A100-40GB 40536MiB GPU-3 MIG(2 instances)"},
	}
	for _, tt := range tests {
		if got := tt.device.String(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

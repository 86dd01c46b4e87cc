package placement

import "testing"

func TestRoundShares(t *testing.T) {
	pods := []Pod{
		{Name: "share", NumGPU: 1, GPUMilli: 300},
		{Name: "exact", NumGPU: 1, GPUMilli: 250},
		{Name: "near-whole", NumGPU: 1, GPUMilli: 900},
		{Name: "whole", NumGPU: 2, GPUMilli: 1000},
		{Name: "cpu", CPUMilli: 1000},
	}
	for _, tc := range []struct {
		name     string
		replicas int
		want     []int64
	}{
		{"zero keeps each milli", 0, []int64{300, 250, 900, 1000, 0}},
		{"four replicas round up to quarters", 4, []int64{500, 250, 1000, 1000, 0}},
		{"ten replicas round up to tenths", 10, []int64{300, 300, 900, 1000, 0}},
	} {
		got := RoundShares(pods, tc.replicas)
		for i, p := range got {
			if p.GPUMilli != tc.want[i] {
				t.Errorf("%s: %s has %d milli, want %d", tc.name, p.Name, p.GPUMilli, tc.want[i])
			}
		}
	}
	if pods[0].GPUMilli != 300 {
		t.Error("RoundShares changed its input")
	}
}

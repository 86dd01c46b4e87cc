package discover

import (
	"strings"
	"testing"
)

func TestParseDeclared(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // "index model uuid memory" per device
	}{
		{"eight of one model", "8xH100-80GB", []string{
			"0 H100-80GB fake-GPU-0 81920", "1 H100-80GB fake-GPU-1 81920", "2 H100-80GB fake-GPU-2 81920",
			"3 H100-80GB fake-GPU-3 81920", "4 H100-80GB fake-GPU-4 81920", "5 H100-80GB fake-GPU-5 81920",
			"6 H100-80GB fake-GPU-6 81920", "7 H100-80GB fake-GPU-7 81920"}},
		{"two models are numbered in the order declared", "4xA100-80GB,2xL4", []string{
			"0 A100-80GB fake-GPU-0 81920", "1 A100-80GB fake-GPU-1 81920", "2 A100-80GB fake-GPU-2 81920",
			"3 A100-80GB fake-GPU-3 81920", "4 L4 fake-GPU-4 24576", "5 L4 fake-GPU-5 24576"}},
		{"aliases, case and spaces are accepted", " 2 x h100 , t4", []string{
			"0 H100-80GB fake-GPU-0 81920", "1 H100-80GB fake-GPU-1 81920", "2 T4 fake-GPU-2 16384"}},
		{"a bare model is one GPU", "H200", []string{"0 H200-141GB fake-GPU-0 144384"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			devices, err := ParseDeclared(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range devices {
				if !d.Fake || d.Product != d.Model || d.MIG || len(d.NVLinkPeers) != 0 || !d.Health.Healthy() {
					t.Errorf("device %d is not a plain fake GPU: %+v", d.Index, d)
				}
				got = append(got, strings.Join([]string{itoa(d.Index), d.Model, d.UUID, itoa(int(d.MemoryMiB))}, " "))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestParseDeclaredErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // each must appear in the error
	}{
		{"nothing", "", []string{"no GPUs declared", "8xH100-80GB"}},
		{"an unknown model names the part and lists the models", "8xH100-80GB,2xH900",
			[]string{`part "2xH900"`, `"H900"`, "H100-80GB", "A100-40GB", "L4", "H100=H100-80GB"}},
		{"a zero count", "0xL4", []string{`part "0xL4"`, "positive"}},
		{"a count without a model", "8x", []string{`part "8x"`, "COUNTxMODEL"}},
		{"a number alone", "8", []string{`part "8"`, "COUNTxMODEL"}},
		{"an empty part", "8xL4,,2xT4", []string{`part ""`, "empty"}},
		{"a count too large to parse", "99999999999999999999xL4", []string{"positive"}},
		{"too many GPUs", "1000xL4,1000xT4", []string{"more than 1024"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			devices, err := ParseDeclared(tt.in)
			if err == nil {
				t.Fatalf("got %d devices, want an error", len(devices))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

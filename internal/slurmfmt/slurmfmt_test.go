package slurmfmt

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"90", 90 * time.Minute},
		{"0", 0},
		{"UNLIMITED", 0},
		{"infinite", 0},
		{"5:30", 5*time.Minute + 30*time.Second},
		{"90:00", 90 * time.Minute},
		{"1:02:03", time.Hour + 2*time.Minute + 3*time.Second},
		{"48:00:00", 48 * time.Hour},
		{"2-12", 60 * time.Hour},
		{"2-12:30", 60*time.Hour + 30*time.Minute},
		{"1-00:00:01", 24*time.Hour + time.Second},
		{"0-30", 30 * time.Hour},
		{" 2h ", 2 * time.Hour},
		{"90m", 90 * time.Minute},
		{"2h30m", 150 * time.Minute},
		{"1.5h", 90 * time.Minute},
		{"1d", 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"36500d", MaxTime},
	} {
		got, err := ParseTime(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseTimeRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"forever", "not a time limit"},
		{"-5", "days"},
		{"-5m", "negative"},
		{"1:2:3:4", "at most 3"},
		{"1:60", "seconds 60"},
		{"1:60:00", "minutes 60"},
		{"1-2:3:60", "seconds 60"},
		{"1-", "hours"},
		{"1-2-3", "hours"},
		{"::", `hours ""`},
		{"1234567890", "9 digits"},
		{"36501d", "over 36500 days"},
		{"999999999", "over 36500 days"},
		{"999999-0", "over 36500 days"},
		{"999999d1h", "over 36500 days"},
		{"36500d1s", "over 36500 days"},
		{"1h1d", "not a time limit"},
	} {
		_, err := ParseTime(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), TimeForms) {
			t.Errorf("ParseTime(%q): %v; want an error saying %q and listing the forms", tc.in, err, tc.want)
		}
	}
}

func TestParseMem(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"512", 512},
		{"512M", 512},
		{"512MiB", 512},
		{"512mb", 512},
		{"16G", 16 << 10},
		{"16g", 16 << 10},
		{"16GiB", 16 << 10},
		{"16Gi", 16 << 10},
		{"1.5G", 1536},
		{"1T", 1 << 20},
		{"2048K", 2},
		{"1K", 1}, // rounded up to a whole MiB
		{"10TiB", 10 << 20},
	} {
		got, err := ParseMem(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseMem(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", MemForms},
		{"lots", MemForms},
		{"-1G", MemForms},
		{"16B", MemForms},
		{"16P", MemForms},
		{"1.G", MemForms},
		{"0", "--mem=0"},
		{"0G", "--mem=0"},
		{"2000000T", "over 1 EiB"},
	} {
		if _, err := ParseMem(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseMem(%q): %v; want an error saying %q", tc.in, err, tc.want)
		}
	}
}

func TestParseGres(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Gres
	}{
		{"gpu", Gres{Count: 1}},
		{"gpu:4", Gres{Count: 4}},
		{"gpu:0", Gres{}},
		{"gpu:h100:8", Gres{Type: "h100", Count: 8}},
		{"gpu:a100", Gres{Type: "a100", Count: 1}},
		{"gpu:1g.10gb:1", Gres{Type: "1g.10gb", Count: 1}},
	} {
		got, err := ParseGres(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseGres(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"shard:2", "only gpu"},
		{"gpu:2,shard:1", "one resource"},
		{"gpu:", "empty"},
		{"gpu::2", "empty"},
		{"gpu:h100:x", `count "x"`},
		{"gpu:-1", "want 0.."},
		{"gpu:a b:1", "type"},
		{"gpu:h100:2:3", GresForms},
	} {
		if _, err := ParseGres(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseGres(%q): %v; want an error saying %q", tc.in, err, tc.want)
		}
	}
}

func TestParseGPUs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Gres
	}{{"2", Gres{Count: 2}}, {"0", Gres{}}, {"h100:8", Gres{Type: "h100", Count: 8}}} {
		got, err := ParseGPUs(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseGPUs(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{{"-1", "negative"}, {"two", "number of GPUs"}, {":2", "empty type"}, {"h100:", "number of GPUs"}} {
		if _, err := ParseGPUs(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseGPUs(%q): %v; want an error saying %q", tc.in, err, tc.want)
		}
	}
}

func TestExport(t *testing.T) {
	env := []string{
		"PATH=/usr/bin", "HOME=/home/a", "CORRAL_TOKEN=crl_secret", "CORRAL_SERVER=http://x",
		"SLURM_JOB_ID=7", "CUDA_VISIBLE_DEVICES=3", "RANK=2", "PWD=/tmp", "_=/usr/bin/corral",
		"BASH_FUNC_f%%=() { :; }", "HF_TOKEN=hf_x", "EMPTY=", "NOEQUALS",
	}
	passed := []string{"PATH=/usr/bin", "HOME=/home/a", "HF_TOKEN=hf_x", "EMPTY="}
	for _, tc := range []struct {
		rule string
		want []string
	}{
		{"", passed},
		{"ALL", passed},
		{"all", passed},
		{"NONE", nil},
		{"NIL", nil},
		{"HOME", []string{"HOME=/home/a"}},
		{"HOME,X=1,MISSING", []string{"HOME=/home/a", "X=1"}},
		{"CORRAL_TOKEN", []string{"CORRAL_TOKEN=crl_secret"}},
		{"ALL,X=1,PATH=/opt/bin", []string{"PATH=/opt/bin", "HOME=/home/a", "HF_TOKEN=hf_x", "EMPTY=", "X=1"}},
		{"ALL,SLURM_JOB_ID", append(slices.Clone(passed), "SLURM_JOB_ID=7")},
		{"A=x=y", []string{"A=x=y"}},
	} {
		got, err := Export(tc.rule, env)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Export(%q) = %q, %v; want %q", tc.rule, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ rule, want string }{
		{"NONE,A=1", "takes no variables"},
		{",A", "empty entry"},
		{"A,,B", `variable ""`},
		{"1A=2", `variable "1A"`},
		{"ALL,A-B=1", `variable "A-B"`},
	} {
		if _, err := Export(tc.rule, env); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "ALL") {
			t.Errorf("Export(%q): %v; want an error saying %q and listing the forms", tc.rule, err, tc.want)
		}
	}
}

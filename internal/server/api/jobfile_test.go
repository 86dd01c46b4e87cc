package api

import (
	"strings"
	"testing"
)

func TestParseJobFile(t *testing.T) {
	for _, tc := range []struct {
		name, in, err string
		check         func(JobRequest) bool
	}{
		{"full", "name: train\ncommand: [torchrun, train.py]\ngpus: 2\ntasks: 4\ntime: 2h\npriority: 10\ngrace: 60s\n", "",
			func(r JobRequest) bool {
				return r.Name == "train" && r.GPUs == 2 && r.Tasks == 4 && r.Time == "2h" && len(r.Command) == 2
			}},
		{"mig", "command: [python]\nmig: 1g.10gb\n", "", func(r JobRequest) bool { return r.MIG == "1g.10gb" }},
		{"share", "command: [python]\nshare: 0.25\n", "", func(r JobRequest) bool { return r.Share == 0.25 }},
		{"unknown field", "command: [x]\ngpu: 1\n", "field gpu not found", nil},
		{"empty", "", "empty", nil},
		{"two documents", "command: [x]\n---\ncommand: [y]\n", "more than one", nil},
		{"negative gpus", "command: [x]\ngpus: -2\n", "negative", nil},
		{"both gpus and mig", "command: [x]\ngpus: 1\nmig: 1g.10gb\n", "one of gpus, mig and share", nil},
		{"bad duration", "command: [x]\ntime: soon\n", "time", nil},
		{"traversal name", "name: ../../x\ncommand: [x]\n", "name", nil},
		{"not a mapping", "- a\n- b\n", "cannot unmarshal", nil},
		{"Slurm time", "command: [x]\ntime: 1-12:00:00\n", "", func(r JobRequest) bool { return r.Time == "1-12:00:00" }},
		{"tasks 0", "command: [x]\ntasks: 0\n", "tasks 0: want 1..64", nil},
		{"share 0", "command: [x]\nshare: 0\n", "share 0: want a fraction", nil},
		{"empty name", "command: [x]\nname: ''\n", `name "": empty`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseJobFile([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one mentioning %q", err, tc.err)
				}
				return
			}
			if err != nil || !tc.check(r) {
				t.Fatalf("got %+v, %v", r, err)
			}
		})
	}
}

// FuzzParseJobFile checks that no input makes the parser panic and that
// whatever it accepts is valid.
func FuzzParseJobFile(f *testing.F) {
	for _, seed := range []string{
		"name: train\ncommand: [torchrun, train.py]\ngpus: 2\ntasks: 4\ntime: 2h\n",
		"command: [python]\nmig: 1g.10gb\n",
		"command: [python]\nshare: 0.25\nenv: [A=1]\n",
		"command: [x]\n---\ncommand: [y]\n",
		"&a [*a]",
		"command: !!binary aGVsbG8=\n",
		"{command: [x], gpus: 99999999999999999999}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseJobFile(data)
		if err != nil {
			return
		}
		if _, err := r.Validate(); err != nil {
			t.Fatalf("accepted an invalid request %+v: %v", r, err)
		}
		if len(r.Command) == 0 || r.GPUs < 0 || r.Tasks < 0 || r.Tasks > MaxTasks {
			t.Fatalf("accepted %+v", r)
		}
	})
}

func TestJobFileSets(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"command: [x]\n", false},
		{"command: [x]\ngpus: 0\n", true},
		{"command: [x]\nshare: 0.5\n", true},
		{"- a\n", false},
	} {
		if got := JobFileSets([]byte(tc.in), "gpus", "mig", "share"); got != tc.want {
			t.Errorf("JobFileSets(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

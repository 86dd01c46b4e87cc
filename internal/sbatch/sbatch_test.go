package sbatch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// read parses and interprets a script of testdata.
func read(t *testing.T, name string) ([]Arg, []Note, error) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(name, src)
	if err != nil {
		return nil, nil, err
	}
	return Interpret(s)
}

// flags writes args as "flag=value" in order.
func flags(args []Arg) []string {
	var out []string
	for _, a := range args {
		out = append(out, a.Flag+"="+a.Value)
	}
	return out
}

func notes(ns []Note) string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Text)
	}
	return strings.Join(out, "\n")
}

func TestPublishedScripts(t *testing.T) {
	for _, tc := range []struct {
		file  string
		want  []string
		notes []string
		err   string
	}{
		{
			file:  "princeton-single-gpu.slurm",
			want:  []string{"name=mnist", "tasks=1", "cpu=1", "mem=8G", "gres=gpu:1", "time=00:05:00"},
			notes: []string{"princeton-single-gpu.slurm:9: #SBATCH --reservation ignored: no reservations here"},
		},
		{
			file: "princeton-lightning-multi.slurm",
			want: []string{"name=myjob", "tasks=2", "cpu=8", "mem-per-cpu=4G", "time=00:05:00", "gres=gpu:2"},
			notes: []string{"princeton-lightning-multi.slurm:9: #SBATCH --constraint ignored: this server is one machine of one GPU model",
				"princeton-lightning-multi.slurm:10: #SBATCH --reservation ignored"},
		},
		{
			file: "princeton-ddp-two-nodes.slurm",
			err:  "princeton-ddp-two-nodes.slurm:3: #SBATCH --nodes=2: --nodes: 2 nodes: this server is one machine",
		},
		{
			file: "ml-engineering-lightning-launcher.slurm",
			err:  "ml-engineering-lightning-launcher.slurm:7: #SBATCH --nodes=2: --nodes: 2 nodes",
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			args, ns, err := read(t, tc.file)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v; want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(flags(args), tc.want) {
				t.Fatalf("flags %q, %v; want %q", flags(args), err, tc.want)
			}
			for _, n := range tc.notes {
				if !strings.Contains(notes(ns), n) {
					t.Errorf("notes\n%s\nlack %q", notes(ns), n)
				}
			}
		})
	}
}

func TestLightningLauncherOnOneNode(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "ml-engineering-lightning-launcher.slurm"))
	if err != nil {
		t.Fatal(err)
	}
	one := strings.Replace(string(src), "--nodes=2", "--nodes=1", 1)
	s, err := Parse("launcher.slurm", []byte(one))
	if err != nil {
		t.Fatal(err)
	}
	args, ns, err := Interpret(s)
	want := []string{"name=lightning-launcher", "tasks=8", "cpu=12", "gres=gpu:8", "time=0:10:00", "output=%x-%j.out"}
	if err != nil || !slices.Equal(flags(args), want) {
		t.Fatalf("flags %q, %v; want %q", flags(args), err, want)
	}
	for _, n := range []string{"launcher.slurm:12: #SBATCH --exclusive ignored", "launcher.slurm:13: #SBATCH --partition ignored"} {
		if !strings.Contains(notes(ns), n) {
			t.Errorf("notes\n%s\nlack %q", notes(ns), n)
		}
	}
	if s.Command != 16 {
		t.Errorf("first command at line %d; want 16 (echo \"START TIME\")", s.Command)
	}
}

func TestParseRules(t *testing.T) {
	script := strings.Join([]string{
		"#!/bin/sh",
		"# SBATCH --time=1 is a comment, not a directive",
		"#SBATCHX --time=2 neither",
		"",
		"#SBATCH -J glued -t 90 --gres gpu:2 # two on one line, and a comment",
		"   #SBATCH --output='my out %j.log'",
		"#SBATCH --hold --nice",
		"#SBATCH -G 4",
		"echo the first command",
		"#SBATCH --time=5",
	}, "\n")
	s, err := Parse("job.sh", []byte(script))
	if err != nil {
		t.Fatal(err)
	}
	args, ns, err := Interpret(s)
	want := []string{"name=glued", "time=90", "gres=gpu:2", "output=my out %j.log", "hold=true", "nice=100", "gpus=4"}
	if err != nil || !slices.Equal(flags(args), want) {
		t.Fatalf("flags %q, %v; want %q", flags(args), err, want)
	}
	if n := notes(ns); !strings.Contains(n, "job.sh:10: #SBATCH after the first command (line 9) ignored") {
		t.Errorf("notes %q: want the late directive named", n)
	}
	if args[0].Line != 5 || args[3].Line != 6 {
		t.Errorf("lines %d and %d; want 5 and 6", args[0].Line, args[3].Line)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"echo hi\n", "not a batch script"},
		{"#!/bin/sh\n#SBATCH --frobnicate=3\n", "job.sh:2: #SBATCH --frobnicate=3: unknown option --frobnicate"},
		{"#!/bin/sh\n#SBATCH --time\n", "job.sh:2: #SBATCH --time: --time needs a value"},
		{"#!/bin/sh\n#SBATCH --hold=yes\n", "job.sh:2: #SBATCH --hold=yes: --hold takes no value"},
		{"#!/bin/sh\n#SBATCH --uid=0\n", "job.sh:2: #SBATCH --uid=0: --uid is not supported: a job runs as its tenant's Unix user"},
		{"#!/bin/sh\n#SBATCH --output='x\n", "unterminated ' quote"},
		{"#!/bin/sh\n#SBATCH gpus\n", `"gpus" is not an option`},
		{"#!/bin/sh\n#SBATCH --kill-on-invalid-dep=maybe\n", `"maybe": want yes or no`},
	} {
		s, err := Parse("job.sh", []byte(tc.script))
		if err == nil {
			_, _, err = Interpret(s)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("script %q: %v; want an error saying %q", tc.script, err, tc.want)
		}
	}
	if _, err := Parse("x", []byte("plain")); !errors.Is(err, ErrNotScript) {
		t.Errorf("a file without #!: %v; want ErrNotScript", err)
	}
}

func TestEveryOptionHasOneMeaning(t *testing.T) {
	seen := map[string]bool{}
	for _, o := range options {
		for _, n := range []string{"--" + o.long, "-" + o.short} {
			if n == "-" {
				continue
			}
			if seen[n] {
				t.Errorf("%s is in the table twice", n)
			}
			seen[n] = true
		}
		set := 0
		for _, b := range []bool{o.flag != "" || o.value != nil, o.ignore != "", o.refuse != ""} {
			if b {
				set++
			}
		}
		if set != 1 {
			t.Errorf("--%s: %s", o.long, fmt.Sprint("maps to a flag, is ignored or is refused: exactly one, not ", set))
		}
	}
}

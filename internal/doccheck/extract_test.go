package doccheck

import (
	"reflect"
	"testing"
)

func TestCommandsOfADocument(t *testing.T) {
	md := "intro\n\n```sh\n" +
		"corral sim   # a comment\n" +
		"# a whole-line comment\n" +
		"corral bench fgd --nodes a.csv \\\n  --pods b.csv\n" +
		"corral queue; corral gpus && corral acct --since 720h\n" +
		"```\n\n```\n" +
		"$ corral prices --now 2026-12-01\n" +
		"price catalog\n" +
		"...\n" +
		"```\n"
	got := Commands("x.md", md)
	want := []Command{
		{Doc: "x.md", Line: 4, Text: "corral sim"},
		{Doc: "x.md", Line: 6, Text: "corral bench fgd --nodes a.csv --pods b.csv"},
		{Doc: "x.md", Line: 8, Text: "corral queue"},
		{Doc: "x.md", Line: 8, Text: "corral gpus"},
		{Doc: "x.md", Line: 8, Text: "corral acct --since 720h"},
		{Doc: "x.md", Line: 12, Text: "corral prices --now 2026-12-01", Expect: []string{"price catalog", "..."}, Block: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestStripCommentAndSplit(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"corral submit --array 0-99%10 -- python t.py  # a gang", []string{"corral submit --array 0-99%10 -- python t.py"}},
		{"corral sbatch t.sbatch; corral run -G 1 -- python e.py", []string{"corral sbatch t.sbatch", "corral run -G 1 -- python e.py"}},
		{"cd examples/cost && ./run.sh   # corral sim --moves", []string{"cd examples/cost", "./run.sh"}},
		{"echo '#; not a comment' && corral version", []string{"echo '#; not a comment'", "corral version"}},
		{"# only a comment", nil},
	} {
		if got := Split(StripComment(tc.line)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestMatches(t *testing.T) {
	out := "header\npretrain  24 tasks on 1 zone: train-0004 train-0005\nembed  4 tasks\ntoo-big  does not fit\n"
	for _, tc := range []struct {
		quoted  []string
		missing string
	}{
		{[]string{"pretrain  24 tasks on 1 zone: train-0004 ...", "too-big  does not fit"}, ""},
		{[]string{"...", "embed  4 tasks   "}, ""},
		{[]string{"too-big  does not fit", "embed  4 tasks"}, "embed  4 tasks"}, // out of order
		{[]string{"embed  5 tasks"}, "embed  5 tasks"},
	} {
		missing, ok := Matches(tc.quoted, out)
		if missing != tc.missing || ok != (tc.missing == "") {
			t.Errorf("%q: missing %q, ok %v; want missing %q", tc.quoted, missing, ok, tc.missing)
		}
	}
}

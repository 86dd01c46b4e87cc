package slurmfmt

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseArray(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  []int
		limit int
		step  int
	}{
		{"0-3", []int{0, 1, 2, 3}, 0, 1},
		{"1,3,5-7", []int{1, 3, 5, 6, 7}, 0, 1},
		{"0-15:4", []int{0, 4, 8, 12}, 0, 4},
		{"0-9%2", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 2, 1},
		{"7", []int{7}, 0, 1},
		{"3,1,3", []int{1, 3}, 0, 2},
		{"0-1000", nil, 0, 1},
	} {
		a, err := ParseArray(tc.in)
		if err != nil || (tc.want != nil && !slices.Equal(a.Indices, tc.want)) || a.Limit != tc.limit || a.Step() != tc.step {
			t.Errorf("ParseArray(%q) = %v %%%d step %d, %v; want %v %%%d step %d", tc.in, a.Indices, a.Limit, a.Step(), err, tc.want, tc.limit, tc.step)
		}
	}
}

func TestParseArrayRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "no indices"},
		{"%4", "no indices"},
		{"0-9%0", "throttle"},
		{"0-9%x", "throttle"},
		{"5-1", "ends before it starts"},
		{"1:2", "a step needs a range"},
		{"0-9:0", "step"},
		{"a-b", `index "a"`},
		{"-1", `index ""`},
		{"0-1001", "more than 1001 tasks"},
		{"0-500,501-1001", "more than 1001 tasks"},
		{"4000001", "0..4000000"},
	} {
		if _, err := ParseArray(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseArray(%q): %v; want an error saying %q", tc.in, err, tc.want)
		}
	}
}

func TestParseBegin(t *testing.T) {
	now := time.Date(2026, 3, 10, 14, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"now", now},
		{"now+60", now.Add(time.Minute)},
		{"now+1hour", now.Add(time.Hour)},
		{"now+2hours", now.Add(2 * time.Hour)},
		{"now+30minutes", now.Add(30 * time.Minute)},
		{"now+30min", now.Add(30 * time.Minute)},
		{"now+1day", now.Add(24 * time.Hour)},
		{"now+1week", now.Add(7 * 24 * time.Hour)},
		{"now-10s", now.Add(-10 * time.Second)},
		{"16:00", time.Date(2026, 3, 10, 16, 0, 0, 0, time.UTC)},
		{"09:15:30", time.Date(2026, 3, 11, 9, 15, 30, 0, time.UTC)},
		{"2026-04-01", time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)},
		{"2026-04-01T08:00", time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)},
		{"2026-04-01T08:00:05", time.Date(2026, 4, 1, 8, 0, 5, 0, time.UTC)},
		{"midnight", time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC)},
		{"noon", time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC)},
		{"teatime", time.Date(2026, 3, 10, 16, 0, 0, 0, time.UTC)},
		{"tomorrow", time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC)},
		{"2026-03-10T15:00:00Z", time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC)},
	} {
		got, err := ParseBegin(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseBegin(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if got, err := ParseSince("09:15:30", now); err != nil || !got.Equal(time.Date(2026, 3, 10, 9, 15, 30, 0, time.UTC)) {
		t.Errorf("ParseSince(09:15:30) = %v, %v; want today's, passed or not", got, err)
	}
	for _, bad := range []string{"soon", "now+1fortnight", "25:00", "2026-02-30", "2026-13-01", "now+999999999weeks"} {
		if _, err := ParseBegin(bad, now); err == nil {
			t.Errorf("ParseBegin(%q): no error", bad)
		}
	}
}

func TestExpand(t *testing.T) {
	v := PatternVars{JobID: "17", Name: "train", ArrayJobID: "12", ArrayIndex: "7", User: "alice", Host: "box", Rank: 1}
	for _, tc := range []struct{ in, want string }{
		{"slurm-%j.out", "slurm-17.out"},
		{"%x-%j.out", "train-17.out"},
		{"logs/%A_%a.err", "logs/12_7.err"},
		{"%u/%N-%n-%t", "alice/box-0-1"},
		{"%3a%%", "007%"},
		{"plain", "plain"},
	} {
		if got, err := Expand(tc.in, v); err != nil || got != tc.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if got, _ := Expand("%A_%a", PatternVars{JobID: "5"}); got != "5_4294967294" {
		t.Errorf("Expand outside an array: %q; want sbatch's 5_4294967294", got)
	}
	for _, bad := range []string{"%q", "x%", "%12"} {
		if err := CheckPattern(bad); err == nil {
			t.Errorf("CheckPattern(%q): no error", bad)
		}
	}
}

func TestParseSignal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Signal
	}{
		{"USR1@120", Signal{Name: "SIGUSR1", Before: 120 * time.Second}},
		{"SIGUSR1", Signal{Name: "SIGUSR1", Before: 60 * time.Second}},
		{"B:TERM@30", Signal{Name: "SIGTERM", Before: 30 * time.Second, MainOnly: true}},
		{"10@5", Signal{Name: "SIGUSR1", Before: 5 * time.Second}},
	} {
		if got, err := ParseSignal(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseSignal(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"KILLALL", "USR1@-1", "USR1@x", "R:USR1", "USR1@70000"} {
		if _, err := ParseSignal(bad); err == nil {
			t.Errorf("ParseSignal(%q): no error", bad)
		}
	}
}

// An admin may raise the limit (the server's --max-array-size) up to
// the ceiling, and no further.
func TestParseArrayUpTo(t *testing.T) {
	if _, err := ParseArray("0-9999"); err == nil {
		t.Error("ParseArray took 10,000 tasks, beyond Slurm's default MaxArraySize")
	}
	a, err := ParseArrayUpTo("0-9999%10", 10_000)
	if err != nil || len(a.Indices) != 10_000 || a.Limit != 10 {
		t.Errorf("10,000 tasks under a limit of 10,000: %d tasks, limit %d, %v", len(a.Indices), a.Limit, err)
	}
	if _, err := ParseArrayUpTo("0-9999", 9_999); err == nil || !strings.Contains(err.Error(), "more than 9999 tasks") {
		t.Errorf("10,000 tasks under a limit of 9,999: %v", err)
	}
	if _, err := ParseArrayUpTo("0-100000", 1_000_000); err == nil || !strings.Contains(err.Error(), "more than 100000 tasks") {
		t.Errorf("beyond the ceiling: %v", err)
	}
}

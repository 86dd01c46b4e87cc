package eligible

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func deps(t *testing.T, s string, resolve map[uint64][]uint64) Dependency {
	t.Helper()
	d, err := ParseDependency(s)
	if err != nil {
		t.Fatalf("ParseDependency(%q): %v", s, err)
	}
	for i, term := range d.Terms {
		for _, r := range term.Refs {
			ids, ok := resolve[r.Job]
			if !ok {
				ids = []uint64{r.Job}
			}
			for _, id := range ids {
				d.Terms[i].Add(id, r.Delay)
			}
		}
	}
	return d
}

func TestEvaluateOneJob(t *testing.T) {
	world := World{Now: now, Deps: map[uint64]Dep{
		1: {Status: Succeeded, Started: true},
		2: {Status: Failed, Started: true},
		3: {Status: Running, Started: true},
		4: {Status: Queued},
		5: {Status: Cancelled},
		6: {Status: Queued, Started: true},
	}}
	for _, tc := range []struct {
		name   string
		job    Job
		dep    string
		reason string
		detail string
	}{
		{"a job with no rule runs", Job{ID: 10}, "", "", ""},
		{"a held job waits for its release", Job{ID: 10, Held: true}, "afterok:1", Held, "corral release 10"},
		{"held wins over a dependency never met", Job{ID: 10, Held: true}, "afterok:2", Held, ""},
		{"before its begin time it waits", Job{ID: 10, Begin: now.Add(time.Hour)}, "", BeginTime, "2026-03-10T13:00:00Z"},
		{"at its begin time it runs", Job{ID: 10, Begin: now}, "", "", ""},
		{"afterok on a completed job is met", Job{ID: 10}, "afterok:1", "", ""},
		{"afterok on a failed job is never met", Job{ID: 10}, "afterok:2", NeverSatisfied, "afterok:2 failed, so this never runs"},
		{"never met wins over a begin time", Job{ID: 10, Begin: now.Add(time.Hour)}, "afterok:5", NeverSatisfied, "was cancelled"},
		{"afterok on a running job waits", Job{ID: 10}, "afterok:3", Waiting, "afterok:3 still runs"},
		{"afterok on all of two waits for the second", Job{ID: 10}, "afterok:1:3", Waiting, "afterok:3"},
		{"afterany on a failed job is met", Job{ID: 10}, "afterany:2", "", ""},
		{"afterany on a job waiting to run again waits", Job{ID: 10}, "afterany:6", Waiting, "waits to run again"},
		{"afternotok on a failed job is met", Job{ID: 10}, "afternotok:2", "", ""},
		{"afternotok on a cancelled job is met", Job{ID: 10}, "afternotok:5", "", ""},
		{"afternotok on a completed job is never met", Job{ID: 10}, "afternotok:1", NeverSatisfied, ""},
		{"after a started job is met", Job{ID: 10}, "after:3", "", ""},
		{"after a job that never ran waits", Job{ID: 10}, "after:4", Waiting, "has not run yet"},
		{"after a job cancelled before it ran is met", Job{ID: 10}, "after:5", "", ""},
		{"all terms: one never met is never met", Job{ID: 10}, "afterok:1,afterok:2", NeverSatisfied, ""},
		{"any term: one met is met", Job{ID: 10}, "afterok:2?afterok:1", "", ""},
		{"any term: one waiting waits", Job{ID: 10}, "afterok:2?afterok:3", Waiting, ""},
		{"any term: all never met is never met", Job{ID: 10}, "afterok:2?afterok:5", NeverSatisfied, ""},
		{"a job that is no job is never met", Job{ID: 10}, "afterany:99", NeverSatisfied, "99 is no job"},
		{"a job that ran before is not asked again", Job{ID: 10, Started: true}, "afterok:2", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := tc.job
			j.Deps = deps(t, tc.dep, nil)
			v := Evaluate(world, []Job{j})[0]
			if v.Reason != tc.reason || !strings.Contains(v.Detail, tc.detail) {
				t.Errorf("verdict %q; want %s with %q", v.String(), tc.reason, tc.detail)
			}
		})
	}
}

func TestSingleton(t *testing.T) {
	world := World{Now: now, Active: []Active{
		{ID: 1, Tenant: "a", Name: "train", Running: true},
		{ID: 2, Tenant: "a", Name: "train"},
		{ID: 3, Tenant: "a", Name: "train"},
		{ID: 4, Tenant: "b", Name: "eval"},
		{ID: 5, Tenant: "a", Name: "eval"},
	}}
	single := deps(t, "singleton", nil)
	jobs := []Job{
		{ID: 2, Tenant: "a", Name: "train", Deps: single}, // one of its name runs
		{ID: 3, Tenant: "a", Name: "train", Deps: single}, // and one waits from before
		{ID: 4, Tenant: "b", Name: "eval", Deps: single},  // another tenant's eval is none of a's
		{ID: 5, Tenant: "a", Name: "eval", Deps: single},  // the only eval of a
	}
	want := []string{Waiting, Waiting, "", ""}
	for i, v := range Evaluate(world, jobs) {
		if v.Reason != want[i] {
			t.Errorf("job %d: %q; want %q", jobs[i].ID, v.String(), want[i])
		}
	}
}

func TestArrayThrottle(t *testing.T) {
	var active []Active
	var pending []Job
	for id := uint64(100); id < 110; id++ {
		running := id < 102
		active = append(active, Active{ID: id, Tenant: "a", Running: running, Array: 100})
		if !running {
			pending = append(pending, Job{ID: id, Tenant: "a", Array: 100, Limit: 4})
		}
	}
	pending[0].Held = true                          // 102: held, takes no room
	pending[1], pending[5] = pending[5], pending[1] // order of the input is not the order of the tasks
	verdicts := Evaluate(World{Now: now, Active: active}, pending)
	eligible := map[uint64]bool{}
	for i, v := range verdicts {
		switch {
		case v.Eligible():
			eligible[pending[i].ID] = true
		case pending[i].ID != 102 && v.Reason != ArrayLimit:
			t.Errorf("task %d: %q; want eligible or %s", pending[i].ID, v.String(), ArrayLimit)
		}
	}
	if len(eligible) != 2 || !eligible[103] || !eligible[104] {
		t.Errorf("eligible %v; want 103 and 104: two running, a limit of 4, the held 102 skipped", eligible)
	}
	if v := verdicts[0]; v.Reason != Held {
		t.Errorf("task 102: %q; want %s", v.String(), Held)
	}
}

func TestParseDependencyRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"afterok", "names no job"},
		{"afterok:x", `job "x"`},
		{"afterok:0", `job "0"`},
		{"afterok:1_y", `array task "y"`},
		{"afterok:1+5", "taken by after only"},
		{"after:1+x", `delay "x"`},
		{"after:1+-5", `delay "-5"`},
		{"after:1+999999", "at most 525600 minutes"},
		{"singleton:3", "names no jobs"},
		{"aftercorr:3", "not supported"},
		{"before:3", "unknown type"},
		{"afterok:1,afterok:2?afterok:3", "mixes"},
	} {
		if _, err := ParseDependency(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseDependency(%q): %v; want an error saying %q", tc.in, err, tc.want)
		}
	}
	d, err := ParseDependency("afterok:j000017:17_3?singleton")
	if err != nil || !d.Any || len(d.Terms) != 2 || d.Terms[0].Refs[0] != (Ref{Job: 17}) || d.Terms[0].Refs[1] != (Ref{Job: 17, Task: 3, HasTask: true}) {
		t.Errorf("ParseDependency: %+v, %v", d, err)
	}
}

func TestAfterWithADelay(t *testing.T) {
	started := now.Add(-10 * time.Minute)
	world := World{Now: now, Deps: map[uint64]Dep{
		1: {Status: Running, Started: true, Since: started},
		2: {Status: Queued},
		3: {Status: Cancelled, Since: now.Add(-time.Minute)},
		4: {Status: Running, Started: true, Since: now.Add(-time.Hour)},
	}}
	for _, tc := range []struct {
		dep, reason, detail string
	}{
		{"after:1+5", "", ""},
		{"after:1+10", "", ""}, // the delay ends now
		{"after:1+11", Waiting, "after:1 started at 2026-03-10T11:50:00Z; its 11-minute delay ends at 2026-03-10T12:01:00Z"},
		{"after:2+1", Waiting, "has not run yet"},
		{"after:3+2", Waiting, "was cancelled at 2026-03-10T11:59:00Z; its 2-minute delay ends at 2026-03-10T12:01:00Z"},
		{"after:4+30:1+20", Waiting, "after:1 started"}, // one job of two still in its delay
		{"after:4+30", "", ""},
		{"after:1+20?afterok:4", Waiting, "delay ends"},
	} {
		j := Job{ID: 10, Deps: deps(t, tc.dep, nil)}
		v := Evaluate(world, []Job{j})[0]
		if v.Reason != tc.reason || !strings.Contains(v.Detail, tc.detail) {
			t.Errorf("%s: verdict %q; want %q with %q", tc.dep, v.String(), tc.reason, tc.detail)
		}
	}
}

func TestDelaysFollowTheirJobs(t *testing.T) {
	d := deps(t, "after:5:7+15", map[uint64][]uint64{7: {7, 8, 9}})
	got := d.String(func(id uint64) string { return fmt.Sprint(id) })
	if want := "after:5:7+15:8+15:9+15"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	back, err := ParseDependency(got)
	if err != nil || len(back.Terms[0].Refs) != 4 || back.Terms[0].Refs[3].Delay != 15*time.Minute || back.Terms[0].Refs[0].Delay != 0 {
		t.Errorf("ParseDependency(%q) = %+v, %v; want the delays back", got, back, err)
	}
}

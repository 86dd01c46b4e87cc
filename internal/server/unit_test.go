package server

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/store"
)

func TestCompleteMappingIsOneToOne(t *testing.T) {
	gpus := fakeGPUs(4)
	for _, tc := range []struct {
		name  string
		pairs map[int]int
		want  []int
	}{
		{"identity when nothing runs", map[int]int{}, []int{0, 1, 2, 3}},
		{"recorded GPUs kept", map[int]int{0: 2, 1: 3}, []int{2, 3, 0, 1}},
		{"gaps filled in order", map[int]int{3: 0}, []int{1, 2, 3, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := completeMapping(tc.pairs, gpus); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	pairs := map[int]int{}
	pair(pairs, []int{0, 1}, []int{5, 6})
	pair(pairs, []int{2}, []int{5}) // contradicts: physical 5 is taken
	if len(pairs) != 2 || pairs[0] != 5 || pairs[1] != 6 {
		t.Fatalf("pairs %v", pairs)
	}
}

func TestOutcome(t *testing.T) {
	ok := executor.Result{ExitCode: 0}
	for _, tc := range []struct {
		name     string
		stopping string
		requeue  bool
		e        ended
		want     store.State
		slurm    string
	}{
		{"all ranks exit 0", "", false, ended{results: []executor.Result{ok, ok}}, store.Succeeded, "COMPLETED"},
		{"one rank fails", "", false, ended{results: []executor.Result{ok, {ExitCode: 2}}}, store.Failed, "FAILED"},
		{"time limit", "", false, ended{results: []executor.Result{{ExitCode: -1, TimedOut: true, Signal: "SIGTERM"}}}, store.Failed, "TIMEOUT"},
		{"cancelled", store.StopCancel, false, ended{results: []executor.Result{{ExitCode: -1, Stopped: true}}}, store.Cancelled, "CANCELLED"},
		{"preempted", "preempted by j000002", false, ended{results: []executor.Result{{Stopped: true}}}, store.Preempted, "PREEMPTED"},
		{"drained", stopDrain + "GPU 1 unhealthy", false, ended{results: []executor.Result{{Stopped: true}}}, store.Pending, "NODE_FAIL"},
		{"lost, no requeue", "", false, ended{err: errLost}, store.Failed, "NODE_FAIL"},
		{"lost, requeue", "", true, ended{err: errLost}, store.Pending, "NODE_FAIL"},
		{"supervisor vanished", "", true, ended{results: []executor.Result{{ExitCode: -1, Lost: true}}}, store.Pending, "NODE_FAIL"},
		{"did not start", "", false, ended{err: &executor.LaunchError{ExitCode: 127}}, store.Failed, "FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := store.Job{Stopping: tc.stopping, Spec: store.Spec{Requeue: tc.requeue, TimeLimit: time.Second}}
			got, why, slurm := outcome(&j, tc.e, failingRank(tc.e.results))
			if got != tc.want || slurm != tc.slurm {
				t.Fatalf("state %s %s (%s), want %s %s", got, slurm, why, tc.want, tc.slurm)
			}
			if got != store.Succeeded && why == "" {
				t.Fatal("no reason given")
			}
		})
	}
}

// TestFailingRankAndExit: the rank that failed on its own names the
// job's end and exit code, not a rank stopped because of it; a job that
// did not start or was lost never exits 0.
func TestFailingRankAndExit(t *testing.T) {
	now := time.Now()
	stopped := executor.Result{ExitCode: -1, Signal: "SIGTERM", Stopped: true, Ended: now.Add(time.Second)}
	failed := executor.Result{ExitCode: 4, Ended: now}
	for _, tc := range []struct {
		name string
		e    ended
		rank int
		exit int
	}{
		{"rank 1 exits 4, rank 0 stopped", ended{results: []executor.Result{stopped, failed}}, 1, 4},
		{"all stopped", ended{results: []executor.Result{stopped, stopped}}, 0, -1},
		{"all exit 0", ended{results: []executor.Result{{}, {}}}, -1, 0},
		{"command not found", ended{err: &executor.LaunchError{ExitCode: 127}}, -1, 127},
		{"lost", ended{err: errLost}, -1, -1},
		{"start failed", ended{err: errors.New("no such user")}, -1, -1},
	} {
		rank := failingRank(tc.e.results)
		if exit := jobExit(tc.e, rank); rank != tc.rank || exit != tc.exit {
			t.Errorf("%s: rank %d exit %d, want rank %d exit %d", tc.name, rank, exit, tc.rank, tc.exit)
		}
	}
}

// The server charges tenants by the core's one charge: MIG instances by
// their profile's part of the box's GPU, shares as asked.
func TestNeedCountsFractions(t *testing.T) {
	gpus := fakeGPUs(8)
	for i := range gpus {
		gpus[i].MIG = true
	}
	f, _, err := buildFleet(gpus, &Config{TimeSlices: 1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := gang.New(f)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{state: st}
	for _, tc := range []struct {
		spec store.Spec
		want int64
	}{
		{store.Spec{GPUs: 2, Tasks: 4}, 8000},
		{store.Spec{GPUMilli: 250, Tasks: 1}, 250},
		{store.Spec{MIG: "1g.10gb", Tasks: 1}, 142},
		{store.Spec{MIG: "3g.40gb", Tasks: 2}, 2 * 428},
		{store.Spec{Tasks: 3}, 0},
	} {
		if got := s.need(&store.Job{Spec: tc.spec})[gpuFlavor]; got != tc.want {
			t.Errorf("need(%+v) = %d milli-GPUs, want %d", tc.spec, got, tc.want)
		}
	}
}

func TestBuildFleetRejectsMixedMachines(t *testing.T) {
	gpus := fakeGPUs(2)
	gpus[1].Model = "A100-80GB"
	if _, _, err := buildFleet(gpus, &Config{TimeSlices: 4}); err == nil {
		t.Fatal("a machine with two GPU models was accepted")
	}
	if _, _, err := buildFleet(nil, &Config{TimeSlices: 4}); err == nil {
		t.Fatal("a machine without GPUs was accepted")
	}
	l4 := []GPU{{Index: 0, Model: "L4", MIG: true}}
	if _, _, err := buildFleet(l4, &Config{TimeSlices: 1}); err == nil {
		t.Fatal("MIG mode on a GPU without MIG was accepted")
	}
}

func TestCycleConsidersAtMostDepthJobs(t *testing.T) {
	dir, st := tempStore(t)
	defer st.Close()
	srv, err := New(Config{Store: st, GPUs: fakeGPUs(8), StateDir: filepath.Join(dir, "tasks"), Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		j, err := st.Submit("t", store.Spec{Command: []string{"true"}, GPUs: 1, Tasks: 1}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		srv.enqueue(j.ID)
	}
	srv.cycle()
	if len(srv.runs) != 2 || len(srv.waiting) != 1 {
		t.Fatalf("after one cycle of depth 2: %d running, %d waiting", len(srv.runs), len(srv.waiting))
	}
	if _, ok := srv.waiting[3]; !ok {
		t.Fatal("the newest job should be the one left waiting")
	}
	for range 2 {
		<-srv.ended // both tasks exit on their own
	}
}

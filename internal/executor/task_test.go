//go:build linux

package executor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		code     int
		signal   string
		stopped  bool
		timedOut bool
	}{
		{"a task that succeeds exits 0", "exit 0", 0, "", false, false},
		{"a task that fails keeps its code", "exit 3", 3, "", false, false},
		{"a task killed by a signal has code -1 and the signal", "kill -KILL $$", -1, "SIGKILL", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := waitDone(t, start(t, shSpec(t, tt.script)))
			if res.ExitCode != tt.code || res.Signal != tt.signal || res.Stopped != tt.stopped || res.TimedOut != tt.timedOut {
				t.Errorf("got %+v, want code %d signal %q", res, tt.code, tt.signal)
			}
			if res.Started.IsZero() || res.Ended.Before(res.Started) {
				t.Errorf("started %v, ended %v", res.Started, res.Ended)
			}
		})
	}
}

func TestOutputGoesToFiles(t *testing.T) {
	spec := shSpec(t, "echo to stdout; echo to stderr >&2")
	task := start(t, spec)
	waitDone(t, task)
	for path, want := range map[string]string{task.StdoutPath(): "to stdout\n", task.StderrPath(): "to stderr\n"} {
		if filepath.Dir(path) != spec.Dir {
			t.Errorf("%s is not in the state directory %s", path, spec.Dir)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s: got %q, want %q", filepath.Base(path), got, want)
		}
	}
}

func TestEnvironment(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Spec)
		want map[string]string
	}{
		{"no devices hides every GPU", func(*Spec) {},
			map[string]string{"CUDA_VISIBLE_DEVICES": "", "NVIDIA_VISIBLE_DEVICES": "void", "CUDA_DEVICE_ORDER": "<unset>"}},
		{"GPU indices are comma-joined", func(s *Spec) { s.Devices = []string{"0", "3"} },
			map[string]string{"CUDA_VISIBLE_DEVICES": "0,3", "NVIDIA_VISIBLE_DEVICES": "0,3", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}},
		{"a MIG instance is named by its UUID", func(s *Spec) { s.Devices = []string{"MIG-4f3c1a2e-0d1b-5c6e-9a7b-1234567890ab"} },
			map[string]string{"CUDA_VISIBLE_DEVICES": "MIG-4f3c1a2e-0d1b-5c6e-9a7b-1234567890ab"}},
		{"extra variables are added but cannot override the devices", func(s *Spec) {
			s.Devices = []string{"2"}
			s.Env = []string{"CORRAL_TEST_EXTRA=yes", "CUDA_VISIBLE_DEVICES=0,1,2,3"}
		}, map[string]string{"CORRAL_TEST_EXTRA": "yes", "CUDA_VISIBLE_DEVICES": "2"}},
		{"a rank of a gang gets the torchrun variables", func(s *Spec) {
			s.Devices = []string{"5"}
			s.WorldSize, s.Rank, s.LocalRank = 4, 2, 2
			s.MasterAddr, s.MasterPort = "127.0.0.1", 29500
		}, map[string]string{"WORLD_SIZE": "4", "RANK": "2", "LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": "4",
			"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500", "CUDA_VISIBLE_DEVICES": "5"}},
		{"a gang spread over machines has its own local world size", func(s *Spec) {
			s.WorldSize, s.Rank, s.LocalRank, s.LocalWorldSize = 16, 9, 1, 8
		}, map[string]string{"WORLD_SIZE": "16", "RANK": "9", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "8"}},
		{"the server's environment is not inherited, nor the supervisor's mode", func(*Spec) {},
			map[string]string{"PATH": DefaultPath, "HOME": currentUser().Home, "USER": currentUser().Name, superviseEnv: "<unset>"}},
		{"the submitter's PATH wins over the default, not its HOME or USER", func(s *Spec) {
			s.Env = []string{"PATH=/opt/x/bin:/usr/bin:/bin", "HOME=/Users/someone", "USER=someone"}
		}, map[string]string{"PATH": "/opt/x/bin:/usr/bin:/bin", "HOME": currentUser().Home, "USER": currentUser().Name}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := shSpec(t, "env")
			tt.edit(&spec)
			task := start(t, spec)
			if res := waitDone(t, task); res.ExitCode != 0 {
				t.Fatalf("env failed: %+v", res)
			}
			env := readEnv(t, task.StdoutPath())
			for key, want := range tt.want {
				got, ok := env[key]
				if !ok {
					got = "<unset>"
				}
				if got != want {
					t.Errorf("%s=%q, want %q", key, got, want)
				}
			}
			if spec.WorldSize == 0 {
				if _, ok := env["RANK"]; ok {
					t.Errorf("RANK is set for a task outside a gang")
				}
			}
		})
	}
}

func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if key, value, ok := strings.Cut(line, "="); ok {
			env[key] = value
		}
	}
	return env
}

func TestWorkDir(t *testing.T) {
	spec := shSpec(t, "pwd")
	spec.WorkDir = t.TempDir()
	task := start(t, spec)
	waitDone(t, task)
	got, _ := os.ReadFile(task.StdoutPath())
	want, _ := filepath.EvalSymlinks(spec.WorkDir)
	if strings.TrimSpace(string(got)) != want {
		t.Errorf("ran in %q, want %q", got, want)
	}
}

func TestTimeLimitStopsTheTask(t *testing.T) {
	spec := shSpec(t, "sleep 30")
	spec.TimeLimit = 300 * time.Millisecond
	spec.Grace = 5 * time.Second
	res := waitDone(t, start(t, spec))
	if !res.TimedOut || res.Stopped || res.Signal != "SIGTERM" || res.ExitCode != -1 {
		t.Errorf("got %+v, want timed out by SIGTERM", res)
	}
	if ran := res.Ended.Sub(res.Started); ran < spec.TimeLimit || ran > spec.TimeLimit+spec.Grace {
		t.Errorf("ran %v with a limit of %v", ran, spec.TimeLimit)
	}
}

func TestStopLetsTheTaskCheckpoint(t *testing.T) {
	// The task saves a checkpoint on SIGTERM, which takes it 300ms, and
	// exits with a code of its own.
	spec := shSpec(t, `trap 'sleep 0.3; echo saved > checkpoint; exit 7' TERM
echo ok > ready
while :; do sleep 0.05; done`)
	task := start(t, spec)
	waitFile(t, filepath.Join(spec.Dir, "ready"))
	task.Stop(5 * time.Second)
	res := waitDone(t, task)
	if !res.Stopped || res.TimedOut || res.ExitCode != 7 || res.Signal != "" {
		t.Errorf("got %+v, want stopped with its own code 7", res)
	}
	if got, _ := os.ReadFile(filepath.Join(spec.Dir, "checkpoint")); string(got) != "saved\n" {
		t.Errorf("checkpoint holds %q, want %q", got, "saved\n")
	}
}

func TestStopKillsATaskThatIgnoresSIGTERM(t *testing.T) {
	spec := shSpec(t, `trap '' TERM
echo ok > ready
while :; do sleep 0.05; done`)
	task := start(t, spec)
	waitFile(t, filepath.Join(spec.Dir, "ready"))
	const grace = 500 * time.Millisecond
	stopped := time.Now()
	task.Stop(grace)
	res := waitDone(t, task)
	if took := time.Since(stopped); took < grace {
		t.Errorf("ended %v after Stop, before the grace period of %v", took, grace)
	}
	if res.Ended.Sub(stopped) < grace {
		t.Errorf("recorded end %v after Stop, before the grace period of %v", res.Ended.Sub(stopped), grace)
	}
	if !res.Stopped || res.Signal != "SIGKILL" || res.ExitCode != -1 {
		t.Errorf("got %+v, want stopped by SIGKILL", res)
	}
}

func TestStopAgainWithShorterGraceKillsSooner(t *testing.T) {
	spec := shSpec(t, `trap '' TERM
echo ok > ready
while :; do sleep 0.05; done`)
	task := start(t, spec)
	waitFile(t, filepath.Join(spec.Dir, "ready"))
	stopped := time.Now()
	task.Stop(time.Minute)
	task.Stop(0)
	res := waitDone(t, task)
	if took := time.Since(stopped); took > 10*time.Second {
		t.Errorf("took %v to end after Stop(0)", took)
	}
	if res.Signal != "SIGKILL" {
		t.Errorf("got %+v, want SIGKILL", res)
	}
}

func TestDescendantsDieWithTheTask(t *testing.T) {
	tests := []struct {
		name   string
		script string
		stop   bool
	}{
		{"a stopped task's children are killed with its group",
			"sleep 300 & echo $! > child.pid; wait", true},
		{"children left behind by a finished task are killed",
			"sleep 300 & echo $! > child.pid; exit 0", false},
		{"a descendant that left the group is still reaped",
			"setsid sleep 300 & echo $! > child.pid; wait", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := shSpec(t, tt.script)
			task := start(t, spec)
			child := readPID(t, filepath.Join(spec.Dir, "child.pid"))
			if tt.stop {
				task.Stop(time.Second)
			}
			waitDone(t, task)
			if !gone(child) {
				t.Errorf("child %d of the task outlived it", child)
			}
		})
	}
}

func TestStopIsSafeConcurrentlyAndAfterTheEnd(t *testing.T) {
	spec := shSpec(t, "echo ok > ready; sleep 30")
	task := start(t, spec)
	waitFile(t, filepath.Join(spec.Dir, "ready"))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { task.Stop(2 * time.Second); _ = task.Result() })
	}
	wg.Wait()
	res := waitDone(t, task)
	task.Stop(0)
	if !res.Stopped || res.Signal != "SIGTERM" {
		t.Errorf("got %+v, want stopped by SIGTERM", res)
	}
	if task.Result() != res {
		t.Errorf("Result changed after the end")
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"a command that does not exist", Spec{ID: "a", Command: []string{"corral-no-such-command"}, Dir: dir}, "corral-no-such-command"},
		{"no command", Spec{ID: "a", Dir: dir}, "no command"},
		{"an id that is a path", Spec{ID: "../a", Command: []string{"true"}, Dir: dir}, "not a file name"},
		{"no state directory", Spec{ID: "a", Command: []string{"true"}}, "no state directory"},
		{"a rank outside the gang", Spec{ID: "a", Command: []string{"true"}, Dir: dir, WorldSize: 2, Rank: 2}, "rank 2 of world size 2"},
		{"a working directory that does not exist", Spec{ID: "a", Command: []string{"true"}, Dir: dir, WorkDir: filepath.Join(dir, "missing")}, "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task, err := Start(tt.spec)
			if err == nil {
				<-task.Done()
				t.Fatalf("Start succeeded, want an error naming %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %q", err, tt.want)
			}
		})
	}
}

func TestAdoptAfterTheServerIsKilled(t *testing.T) {
	spec := shSpec(t, `while [ ! -e go ]; do sleep 0.05; done; echo finished; exit 5`)
	pid := startInOtherServer(t, spec)
	task, err := Adopt(spec, pid)
	if err != nil {
		t.Fatalf("Adopt: %v", err)
	}
	t.Cleanup(func() { task.Stop(0); <-task.Done() })
	if task.PID() != pid {
		t.Errorf("PID %d, want %d", task.PID(), pid)
	}
	select {
	case <-task.Done():
		t.Fatalf("adopted task is done before it ended: %+v", task.Result())
	case <-time.After(100 * time.Millisecond):
	}
	if err := os.WriteFile(filepath.Join(spec.Dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := waitDone(t, task)
	if res.ExitCode != 5 || res.Lost || res.Stopped {
		t.Errorf("got %+v, want exit code 5 recovered", res)
	}
	if out, _ := os.ReadFile(task.StdoutPath()); string(out) != "finished\n" {
		t.Errorf("stdout %q", out)
	}
}

func TestStopAnAdoptedTask(t *testing.T) {
	spec := shSpec(t, "sleep 30")
	pid := startInOtherServer(t, spec)
	task, err := Adopt(spec, pid)
	if err != nil {
		t.Fatalf("Adopt: %v", err)
	}
	task.Stop(5 * time.Second)
	res := waitDone(t, task)
	if !res.Stopped || res.Signal != "SIGTERM" {
		t.Errorf("got %+v, want stopped by SIGTERM", res)
	}
	if !gone(pid) {
		t.Errorf("task %d still runs", pid)
	}
}

func TestAdoptAnEndedTask(t *testing.T) {
	spec := shSpec(t, "exit 4")
	first := start(t, spec)
	want := waitDone(t, first)

	task, err := Adopt(spec, first.PID())
	if err != nil {
		t.Fatalf("Adopt: %v", err)
	}
	select {
	case <-task.Done():
	default:
		t.Fatal("an ended task is not done at once")
	}
	got := task.Result()
	if got.ExitCode != 4 || !got.Started.Equal(want.Started) || !got.Ended.Equal(want.Ended) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if task.PID() != first.PID() {
		t.Errorf("PID %d, want %d", task.PID(), first.PID())
	}
}

func TestAdoptLost(t *testing.T) {
	t.Run("nothing was ever started", func(t *testing.T) {
		_, err := Adopt(shSpec(t, "true"), 12345)
		if !errors.Is(err, ErrLost) {
			t.Errorf("got %v, want ErrLost", err)
		}
	})
	t.Run("the pid is not the recorded one", func(t *testing.T) {
		spec := shSpec(t, "sleep 30")
		task := start(t, spec)
		_, err := Adopt(spec, task.PID()+1)
		if !errors.Is(err, ErrLost) {
			t.Errorf("got %v, want ErrLost", err)
		}
	})
	t.Run("the supervisor was killed", func(t *testing.T) {
		spec := shSpec(t, "sleep 30 & echo $! > child.pid; wait")
		pid := startInOtherServer(t, spec)
		child := readPID(t, filepath.Join(spec.Dir, "child.pid"))
		var st state
		if err := readJSON(spec.statePath(), &st); err != nil {
			t.Fatal(err)
		}
		task, err := Adopt(spec, pid)
		if err != nil {
			t.Fatalf("Adopt: %v", err)
		}
		if err := killPID(st.Supervisor); err != nil {
			t.Fatal(err)
		}
		res := waitDone(t, task)
		if !res.Lost || res.ExitCode != -1 {
			t.Errorf("got %+v, want lost", res)
		}
		// Done: the task and its child have died (they may wait to be
		// reaped by their new parent).
		if running(pid) || running(child) {
			t.Errorf("task %d or its child %d still runs once the task is Done", pid, child)
		}
		waitGone(t, pid, "task of a killed supervisor")
		waitGone(t, child, "child of the task of a killed supervisor")
		if _, err := Adopt(spec, pid); !errors.Is(err, ErrLost) {
			t.Errorf("adopting again: got %v, want ErrLost", err)
		}
	})
}

func TestStartReplacesTheRecordsOfAnEarlierRun(t *testing.T) {
	spec := shSpec(t, "exit 2")
	waitDone(t, start(t, spec))
	spec.Command = []string{"sh", "-c", "echo ok > ready; sleep 30"}
	task := start(t, spec)
	waitFile(t, filepath.Join(spec.Dir, "ready"))
	adopted, err := Adopt(spec, task.PID())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-adopted.Done():
		t.Fatalf("adopted the earlier run's record: %+v", adopted.Result())
	default:
	}
	adopted.Stop(0)
	if res := waitDone(t, task); !res.Stopped {
		t.Errorf("got %+v, want stopped", res)
	}
	waitDone(t, adopted)
}

func TestStartRefusesATaskThatStillRuns(t *testing.T) {
	spec := shSpec(t, "sleep 30")
	task := start(t, spec)
	if _, err := Start(spec); err == nil || !strings.Contains(err.Error(), "already runs") {
		t.Errorf("second Start: got %v, want an error saying it already runs", err)
	}
	task.Stop(0)
	waitDone(t, task)
	spec.Command = []string{"true"}
	if res := waitDone(t, start(t, spec)); res.ExitCode != 0 {
		t.Errorf("a new run after the end: %+v", res)
	}
}

func TestStatStateGroup(t *testing.T) {
	tests := []struct {
		stat, state string
		pgid        int
		ok          bool
	}{
		{"4243 (sleep) S 4242 4242 4242 0 -1 4194560", "S", 4242, true},
		{"4244 (a) b (c) Z 1 4242 4242 0", "Z", 4242, true},
		{"4245 (sh) R 1", "", 0, false},
	}
	for _, tt := range tests {
		state, pgid, ok := statStateGroup(tt.stat)
		if state != tt.state || pgid != tt.pgid || ok != tt.ok {
			t.Errorf("statStateGroup(%q) = %q, %d, %v; want %q, %d, %v", tt.stat, state, pgid, ok, tt.state, tt.pgid, tt.ok)
		}
	}
}

func TestParseStatStart(t *testing.T) {
	tests := []struct {
		name  string
		stat  string
		start uint64
		err   string
	}{
		{"a plain name", "4242 (sleep) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 8192 100", 987654, ""},
		{"a name with spaces and parentheses", "4242 (a) b (c) R 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123 8192 100", 123, ""},
		{"a zombie", "4242 (sh) Z 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123 0 0", 0, "exited"},
		{"a truncated line", "4242 (sh) S 1 4242", 0, "too few fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatStart(tt.stat)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("got %d, %v; want an error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.start {
				t.Errorf("got %d, %v; want %d", got, err, tt.start)
			}
		})
	}
}

// TestTimeLimitChangedWhileRunning: a running task's limit is lowered
// (it is stopped as timed out at the new limit), raised (it outlives the
// old one), and changed on a task adopted from another server.
func TestTimeLimitChangedWhileRunning(t *testing.T) {
	t.Run("lowered", func(t *testing.T) {
		spec := shSpec(t, "sleep 30")
		spec.TimeLimit, spec.Grace = time.Hour, 5*time.Second
		task := start(t, spec)
		if err := task.SetTimeLimit(500 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		res := waitDone(t, task)
		if !res.TimedOut || res.Stopped {
			t.Errorf("got %+v; want timed out at the lowered limit", res)
		}
		if ran := res.Ended.Sub(res.Started); ran < 500*time.Millisecond || ran > 10*time.Second {
			t.Errorf("ran %v with a limit lowered to 500ms", ran)
		}
	})
	t.Run("raised", func(t *testing.T) {
		spec := shSpec(t, "sleep 30")
		spec.TimeLimit, spec.Grace = 2*time.Second, 5*time.Second
		task := start(t, spec)
		if err := task.SetTimeLimit(time.Hour); err != nil {
			t.Fatal(err)
		}
		select {
		case <-task.Done():
			t.Fatalf("ended %+v; want it past its old limit of 2s", task.Result())
		case <-time.After(3 * time.Second):
		}
		task.Stop(0)
		if res := waitDone(t, task); res.TimedOut || !res.Stopped {
			t.Errorf("got %+v; want stopped, not timed out", res)
		}
	})
	t.Run("adopted", func(t *testing.T) {
		spec := shSpec(t, "sleep 30")
		spec.Grace = 5 * time.Second
		task, err := Adopt(spec, startInOtherServer(t, spec))
		if err != nil {
			t.Fatal(err)
		}
		if err := task.SetTimeLimit(time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if res := waitDone(t, task); !res.TimedOut {
			t.Errorf("got %+v; want timed out: a limit already passed stops it at once", res)
		}
	})
	t.Run("older supervisor", func(t *testing.T) {
		spec := shSpec(t, "sleep 30")
		pid := startInOtherServer(t, spec)
		var st state
		if err := readJSON(spec.statePath(), &st); err != nil {
			t.Fatal(err)
		}
		st.TakesLimit = false // as a supervisor of before this change wrote it
		if err := writeJSON(spec.statePath(), st); err != nil {
			t.Fatal(err)
		}
		task, err := Adopt(spec, pid)
		if err != nil {
			t.Fatal(err)
		}
		if err := task.SetTimeLimit(time.Millisecond); !errors.Is(err, ErrNoLimitChange) {
			t.Errorf("SetTimeLimit: %v; want ErrNoLimitChange, and no signal that would kill it", err)
		}
		task.Stop(0)
		if res := waitDone(t, task); !res.Stopped {
			t.Errorf("got %+v; want stopped by Stop, its supervisor alive until then", res)
		}
	})
}

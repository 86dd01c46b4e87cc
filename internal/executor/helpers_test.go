//go:build linux

package executor

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// starterEnv makes the test binary a stand-in server: it starts the task
// whose Spec is the variable's JSON value, prints the task's pid and then
// waits to be killed.
const starterEnv = "CORRAL_EXECUTOR_TEST_STARTER"

func TestMain(m *testing.M) {
	if specJSON := os.Getenv(starterEnv); specJSON != "" {
		os.Exit(runStarter(specJSON))
	}
	os.Exit(m.Run())
}

func runStarter(specJSON string) int {
	var spec Spec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	task, err := Start(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(task.PID())
	select {}
}

// startInOtherServer starts spec from a re-executed test binary, which it
// then kills with SIGKILL, and returns the task's pid.
func startInOtherServer(t *testing.T, spec Spec) int {
	t.Helper()
	specJSON, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	server := exec.Command(os.Args[0])
	server.Env = append(os.Environ(), starterEnv+"="+string(specJSON))
	server.Stderr = os.Stderr
	out, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		server.Process.Kill()
		server.Wait()
		t.Fatalf("the other server did not report a pid: %v", err)
	}
	if err := server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	server.Wait()
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// shSpec is a task that runs script with sh in a fresh directory.
func shSpec(t *testing.T, script string) Spec {
	return Spec{ID: "j000001-0", Command: []string{"sh", "-c", script}, Dir: t.TempDir()}
}

// start starts spec and makes sure the task is gone when the test ends.
func start(t *testing.T, spec Spec) *Task {
	t.Helper()
	task, err := Start(spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { task.Stop(0); <-task.Done() })
	return task
}

// waitDone waits for the task to end and returns its Result.
func waitDone(t *testing.T, task *Task) Result {
	t.Helper()
	select {
	case <-task.Done():
		return task.Result()
	case <-time.After(20 * time.Second):
		t.Fatalf("task %d did not end", task.PID())
		return Result{}
	}
}

// waitFile waits until path exists and returns its content.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(path); err == nil && len(data) > 0 {
			return string(data)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", filepath.Base(path))
	return ""
}

// gone reports whether no process has the given pid.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// waitGone waits until the process pid no longer exists.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(waitFile(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

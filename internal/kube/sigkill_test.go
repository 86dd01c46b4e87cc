package kube

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// leaderChildEnv makes the test binary a scheduler process that leads
// alone and stops before its (K+1)-th binding, saying so on stdout, until
// it is killed.
const leaderChildEnv = "CORRAL_TEST_LEADER_CHILD"

type leaderChild struct {
	Host      string
	Token     string
	TLS       rest.TLSClientConfig
	Namespace string
	K         int
	// User and Groups are whom it acts as (corral's ServiceAccount).
	User   string
	Groups []string
}

// runLeaderChild is the child's main.
func runLeaderChild(spec string) int {
	var c leaderChild
	if err := json.Unmarshal([]byte(spec), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	rc := &rest.Config{Host: c.Host, BearerToken: c.Token, TLSClientConfig: c.TLS, QPS: 100, Burst: 200,
		Impersonate: rest.ImpersonationConfig{UserName: c.User, Groups: c.Groups}}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg := Config{NodeSelector: labels.SelectorFromSet(labels.Set{testLabel: c.Namespace}), Interval: 500 * time.Millisecond,
		Levels: []Level{{Name: "block", Labels: []string{"corral.test/block"}}, {Name: "rack", Labels: []string{"corral.test/rack"}}}}
	s := New(client, dyn, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	var n atomic.Int32
	s.beforeBind = func(binding) error {
		if int(n.Add(1)) > c.K {
			fmt.Printf("stopped after %d bindings\n", c.K)
			select {} // until SIGKILL
		}
		return nil
	}
	if err := s.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return 1
}

// startLeaderChild starts the child and returns it once it stopped
// before its (k+1)-th binding.
func (e *env) startLeaderChild(k int) *exec.Cmd {
	e.t.Helper()
	cfg := e.deployed().Config
	spec, err := json.Marshal(leaderChild{Host: cfg.Host, Token: cfg.BearerToken, TLS: cfg.TLSClientConfig, Namespace: e.ns, K: k,
		User: cfg.Impersonate.UserName, Groups: cfg.Impersonate.Groups})
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), leaderChildEnv+"="+string(spec))
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	stopped := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "stopped after") {
				stopped <- true
				break
			}
		}
		stopped <- false
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case ok := <-stopped:
		if !ok {
			e.t.Fatal("the scheduler process ended before stopping at its binding")
		}
	case <-time.After(60 * time.Second):
		e.t.Fatal("the scheduler process never reached the binding to die at")
	}
	return cmd
}

// TestLeaderProcessKilledBetweenGangBinds SIGKILLs a scheduler process
// between the bindings of a 4-pod gang, at every position; one cycle of a
// new leader leaves the gang whole, or with a member deleted meanwhile,
// not bound at all (before, the bound members were left running short).
func TestLeaderProcessKilledBetweenGangBinds(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(e *env)
		want   int
	}{
		{"nothing changed", func(*env) {}, 4},
		{"a pending member deleted", func(e *env) { e.deletePod(e.pendingMember()) }, 0},
	} {
		for k := range 4 {
			t.Run(fmt.Sprintf("%s/after %d binds", c.name, k), func(t *testing.T) {
				e := gangEnv(t)
				cmd := e.startLeaderChild(k)
				if b, _ := e.liveBound(); b != k || !e.intentRecorded() {
					t.Fatalf("before the kill: %d bound, record %v; want %d and a record", b, e.intentRecorded(), k)
				}
				if err := cmd.Process.Kill(); err != nil { // SIGKILL
					t.Fatal(err)
				}
				_ = cmd.Wait()
				c.change(e)
				e.newLeaderCycle(e.config())
				if b, _ := e.liveBound(); b != c.want || e.intentRecorded() {
					t.Errorf("after one cycle of the new leader: %d bound, record %v; want %d and no record", b, e.intentRecorded(), c.want)
				}
			})
		}
	}
}

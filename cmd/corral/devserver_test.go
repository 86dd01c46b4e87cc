package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
)

// TestServerDevKeepsItsDatabase: a --dev server restarted finds the jobs
// of the one before (its database is kept in the state directory), and
// --fresh starts with none.
func TestServerDevKeepsItsDatabase(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	first := startServerChild(t, "--dev", "--listen", anyLoopbackPort, "--new-admin-token")
	c := &client.Client{Server: first.url, Token: first.token}
	j, err := c.Submit(context.Background(), api.JobRequest{GPUs: 1, Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	first.cmd.Process.Kill()
	first.cmd.Wait()
	if _, err := os.Stat(filepath.Join(state, "corral", "dev", "corral.db")); err != nil {
		t.Fatalf("no database in the state directory: %v", err)
	}
	again := startServerChild(t, "--dev", "--listen", anyLoopbackPort, "--new-admin-token")
	c = &client.Client{Server: again.url, Token: again.token}
	if got, err := c.Job(context.Background(), j.ID); err != nil || got.ID != j.ID {
		t.Fatalf("after a restart: %+v, %v: want job %s kept", got, err, j.ID)
	}
	again.cmd.Process.Kill()
	again.cmd.Wait()
	fresh := startServerChild(t, "--dev", "--fresh", "--listen", anyLoopbackPort, "--new-admin-token")
	c = &client.Client{Server: fresh.url, Token: fresh.token}
	var ce *client.Error
	if _, err := c.Job(context.Background(), j.ID); !errors.As(err, &ce) || ce.Status != 404 {
		t.Fatalf("after --fresh: %v, want 404", err)
	}
}

// TestDevBannerNamesNoNvidiaSmiForDeclaredGPUs: with declared GPUs
// (--dev's) there is no driver, and the first job the banner suggests
// does not need one.
func TestDevBannerNamesNoNvidiaSmiForDeclaredGPUs(t *testing.T) {
	if s := nextSteps(serverFlags{dev: true, gpus: "8xH100-80GB"}); strings.Contains(s, "nvidia-smi") {
		t.Errorf("declared GPUs: %q suggests nvidia-smi", s)
	}
	if s := nextSteps(serverFlags{}); !strings.Contains(s, "nvidia-smi -L") {
		t.Errorf("real GPUs: %q", s)
	}
}

func TestServerFreshNeedsDev(t *testing.T) {
	err := serve(context.Background(), serverFlags{fresh: true, db: filepath.Join(t.TempDir(), "x.db"), gpus: "1xL4"}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "--fresh") {
		t.Fatalf("--fresh with --db: %v", err)
	}
}

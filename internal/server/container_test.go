package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// A job with an image runs through the configured container runtime: the
// runtime gets the image, the assigned GPUs and the gang's variables by
// name, and the task's command after the image. The runtime here is a
// script that logs its arguments and runs the command itself.
func TestImageJobsRunThroughTheContainerRuntime(t *testing.T) {
	dir := t.TempDir()
	runtime := filepath.Join(dir, "fake-docker")
	script := `#!/bin/sh
echo "runtime: $*"
while [ $# -gt 0 ]; do case "$1" in example.org/train:1) shift; exec "$@";; *) shift;; esac; done
`
	if err := os.WriteFile(runtime, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "corral.db"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Store: st, GPUs: fakeGPUs(4), StateDir: filepath.Join(dir, "tasks"), Interval: 50 * time.Millisecond, ContainerRuntime: runtime})
	if err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, srv, st)
	c := h.tenant("team", 0)
	j := h.submit(c, api.JobRequest{Image: "example.org/train:1", GPUs: 2, Tasks: 2, Command: sh(`echo "rank $RANK of $WORLD_SIZE"`)})
	h.waitState(c, j.ID, store.Succeeded, 20*time.Second)
	out := h.logs(c, j.ID, 1)
	for _, want := range []string{"runtime: run --rm --init --network=host --name corral-", `--gpus "device=`, "-e RANK", "-e MASTER_PORT", "example.org/train:1 sh -c", "rank 1 of 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("rank 1's log lacks %q:\n%s", want, out)
		}
	}
	if _, err := c.Submit(t.Context(), api.JobRequest{Image: "bad image; rm -rf /", Command: []string{"true"}}); err == nil {
		t.Error("an image reference with spaces and a semicolon was accepted")
	}
	noRuntime := &Server{}
	if _, err := noRuntime.specOf(api.JobRequest{Image: "example.org/train:1", Command: []string{"true"}}); err == nil || !strings.Contains(err.Error(), "runs no containers") {
		t.Errorf("an image job on a server without a runtime: %v", err)
	}
}

package main

import (
	"strings"
	"testing"
)

func TestSimImagePull(t *testing.T) {
	out, errOut, code := runCLI(t, "sim", "--nodes", "16", "--days", "2", "--image-pull", "100MB/s", "--policies", "corral,kube-default")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	at := strings.Index(out, "image pulls at")
	if at < 0 {
		t.Fatalf("no image pull table:\n%s", out)
	}
	for _, want := range []string{"image pulls at 100MB/s per node", "GPU-h pulling", "\n  corral ", "\n  kube-default "} {
		if !strings.Contains(out[at:], want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"100", "100Mb/s", "0MB/s"} {
		if _, errOut, code := runCLI(t, "sim", "--nodes", "2", "--days", "1", "--image-pull", bad); code != 2 || !strings.Contains(errOut, "want a rate such as 100MB/s") {
			t.Errorf("--image-pull %s: exit %d, %q; want 2 and the forms it takes", bad, code, errOut)
		}
	}
}

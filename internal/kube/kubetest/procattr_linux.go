package kubetest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the child exit when the test binary does, so that a
// killed test leaves no control plane behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

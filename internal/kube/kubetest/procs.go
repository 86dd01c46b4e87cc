package kubetest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// ErrNoBinaries says that etcd or kube-apiserver is not installed.
var ErrNoBinaries = errors.New("control-plane binaries not found")

// binaries are the control-plane programs, found by Binaries.
type binaries struct {
	etcd, apiserver, scheduler string
}

// findBinaries looks in $CORRAL_KUBE_BIN, then ~/.cache/corral/bin.
func findBinaries() (binaries, error) {
	dir := os.Getenv("CORRAL_KUBE_BIN")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return binaries{}, fmt.Errorf("home directory: %w", err)
		}
		dir = filepath.Join(home, ".cache", "corral", "bin")
	}
	b := binaries{
		etcd:      filepath.Join(dir, "etcd"),
		apiserver: filepath.Join(dir, "kube-apiserver"),
		scheduler: filepath.Join(dir, "kube-scheduler"),
	}
	for _, p := range []string{b.etcd, b.apiserver} {
		if _, err := os.Stat(p); err != nil {
			return b, fmt.Errorf("%w: no %s (build them with scripts/deps/10-kube.sh or set CORRAL_KUBE_BIN)", ErrNoBinaries, p)
		}
	}
	return b, nil
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Process is a child program with its log file, killed with the test
// process (dieWithParent).
type Process struct {
	Name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // its exit, once done is closed
}

// StartProcess starts bin with args, its output in dir/name.log and env
// added to this process's environment.
func StartProcess(dir string, env []string, name, bin string, args ...string) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(append(os.Environ(), "ETCD_UNSUPPORTED_ARCH="+goarch()), env...)
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.done) }()
	return p, nil
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop ends the process: SIGTERM, then SIGKILL after a few seconds.
func (p *Process) Stop() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Tail is the end of the process's log, for error messages.
func (p *Process) Tail() string {
	data, _ := os.ReadFile(p.log)
	if len(data) > 3000 {
		data = data[len(data)-3000:]
	}
	return string(data)
}

// waitHTTP polls url until it answers 200, the process exits or the
// deadline passes.
func waitHTTP(ctx context.Context, p *Process, url string, caPEM []byte, token string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	if caPEM != nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v) before it was ready:\n%s", p.Name, p.err, p.Tail())
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s: %w\n%s", p.Name, url, errors.Join(ctx.Err(), err), p.Tail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

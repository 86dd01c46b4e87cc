package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"golang.org/x/sys/unix"
)

const runUsage = `Usage: corral run [flags] COMMAND [ARGS...]

Runs a job in the foreground, like srun: submits it with corral submit's
flags, prints its output as it is written (every rank's standard output
and error; -l puts each line's rank before it) and exits with the job's
exit code: 0 when it completed, its failing rank's code, 128+N for a
rank killed by signal N. While the job waits, corral run says why on
stderr. Ctrl-C or SIGTERM cancels the job, which is stopped with its
grace period; corral run then exits 128+the signal.

  corral run -G 1 -- python -c 'import torch; print(torch.cuda.device_count())'
  corral run -G 4 -n 4 -l torchrun train.py
` + clientHelp + `
Flags:
`

func runRun(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("run", stderr)
	var r api.JobRequest
	var sf submitFlags
	defineSubmitFlags(fs, &r, &sf)
	label := fs.Bool("label", false, "put each line's rank before it")
	alias(fs, "label", "l")
	if err := parseLeadingFlags(fs, runUsage, args); err != nil {
		return err
	}
	if sf.json {
		return &usageError{cmd: "run", err: errors.New("--json, --yaml: corral run prints the job's output; corral submit --json prints the job")}
	}
	req, err := buildRequest(fs, &r, &sf, os.Environ(), stderr)
	switch {
	case err != nil:
		return err
	case req.Array != "":
		return errors.New("--array: corral run runs one job; submit arrays with corral submit")
	}
	for _, n := range sf.notes {
		fmt.Fprintf(stderr, "corral run: %s\n", n)
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	j, err := c.Submit(ctx, req)
	cancel()
	if err != nil {
		return err
	}
	return foreground(c, j, *label, sigs, stdout, stderr)
}

// foreground streams j's output while it waits and runs, cancels it on
// a signal, and returns its end as an exit status.
func foreground(c *client.Client, j api.Job, label bool, sigs <-chan os.Signal, stdout, stderr io.Writer) error {
	streams := streamRanks(c, j, label, stdout, stderr)
	var got os.Signal
	said := ""
	for !finalState(j.State) {
		select {
		case s := <-sigs:
			if got == nil {
				got = s
				fmt.Fprintf(stderr, "corral run: %v: cancelling job %s\n", s, j.ID)
				cancelJob(c, j.ID, stderr)
			}
		case <-time.After(200 * time.Millisecond):
		}
		next, err := readJob(c, j.ID)
		if err != nil {
			fmt.Fprintf(stderr, "corral run: job %s: %v\n", j.ID, err)
			continue
		}
		j = next
		said = sayWait(j, said, stderr)
	}
	streams.wait(10 * time.Second)
	if got != nil {
		return &exitStatus{128 + int(got.(syscall.Signal))}
	}
	return jobExit(j, stderr)
}

// sayWait tells, once per reason, why the job waits, and when it starts
// after waiting.
func sayWait(j api.Job, said string, stderr io.Writer) string {
	switch {
	case j.State == "pending" && j.Reason != "" && j.Reason != said:
		fmt.Fprintf(stderr, "corral run: job %s waits: %s\n", j.ID, j.Reason)
		return j.Reason
	case j.State == "running" && said != "":
		fmt.Fprintf(stderr, "corral run: job %s runs\n", j.ID)
		return ""
	}
	return said
}

func readJob(c *client.Client, id string) (api.Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Job(ctx, id)
}

func cancelJob(c *client.Client, id string, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Cancel(ctx, id); err != nil {
		fmt.Fprintf(stderr, "corral run: cancel %s: %v\n", id, err)
	}
}

func finalState(s string) bool { return s == "succeeded" || s == "failed" || s == "cancelled" }

// jobExit is the exit status of an ended job, saying on stderr how a
// job that did not complete ended.
func jobExit(j api.Job, stderr io.Writer) error {
	code := exitOf(j)
	if code != 0 {
		fmt.Fprintf(stderr, "corral: job %s %s: %s\n", j.ID, j.SlurmState, orDash(j.Reason))
		return &exitStatus{code}
	}
	return nil
}

// exitOf is a shell's exit status for an ended job: 0 when it completed,
// its failing rank's exit code, 128+N for a rank killed by signal N,
// else 1.
func exitOf(j api.Job) int {
	if j.State == "succeeded" {
		return 0
	}
	if j.ExitCode != nil && *j.ExitCode > 0 {
		return *j.ExitCode
	}
	for _, t := range j.Tasks {
		if n := unix.SignalNum(t.Signal); n != 0 {
			return 128 + int(n)
		}
	}
	return 1
}

// waitForJobs waits for j (every task, for an array) to end, as sbatch
// --wait: the exit status is the highest of their codes.
func waitForJobs(c *client.Client, j api.Job, stderr io.Writer) error {
	ids := []string{j.ID}
	if j.ArrayTasks > 0 {
		ids = nil
		jobs, err := listJobs(c)
		if err != nil {
			return err
		}
		for _, t := range jobs {
			if t.ArrayJob == j.ID {
				ids = append(ids, t.ID)
			}
		}
	}
	worst := 0
	for _, id := range ids {
		for {
			cur, err := readJob(c, id)
			if err == nil && finalState(cur.State) {
				worst = max(worst, exitOf(cur))
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	if worst != 0 {
		fmt.Fprintf(stderr, "corral: job %s ended with exit status %d\n", j.ID, worst)
		return &exitStatus{worst}
	}
	return nil
}

func listJobs(c *client.Client) ([]api.Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Jobs(ctx, nil)
}

// exitStatus is the exit code a command ends with, having said why
// already: main prints nothing more.
type exitStatus struct{ code int }

func (e *exitStatus) Error() string { return "exit status " + strconv.Itoa(e.code) }

// streams follows every rank's output until the job ends.
type streams struct {
	wg      sync.WaitGroup
	cancel  context.CancelFunc
	writers []*lineWriter
}

// streamRanks follows the standard output and error of every rank of j
// into stdout and stderr, a line at a time.
func streamRanks(c *client.Client, j api.Job, label bool, stdout, stderr io.Writer) *streams {
	ctx, cancel := context.WithCancel(context.Background())
	s := &streams{cancel: cancel}
	var mu sync.Mutex
	for rank := range max(j.Request.Tasks, 1) {
		for _, out := range []struct {
			name string
			w    io.Writer
		}{{"stdout", stdout}, {"stderr", stderr}} {
			lw := &lineWriter{w: out.w, mu: &mu}
			if label {
				lw.prefix = strconv.Itoa(rank) + ": "
			}
			s.writers = append(s.writers, lw)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				c.Logs(ctx, j.ID, rank, out.name, true, lw)
			}()
		}
	}
	return s
}

// wait waits up to limit for the streams to drain, then stops them and
// writes what is left of each.
func (s *streams) wait(limit time.Duration) {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		s.cancel()
		<-done
	}
	s.cancel()
	for _, w := range s.writers {
		w.flush()
	}
}

// lineWriter writes whole lines, with a prefix, under a mutex shared
// with the other ranks' writers, so that lines do not interleave.
type lineWriter struct {
	w      io.Writer
	mu     *sync.Mutex
	prefix string
	buf    []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.emit(l.buf[:i+1])
		l.buf = l.buf[i+1:]
	}
}

func (l *lineWriter) emit(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, l.prefix)
	l.w.Write(line)
}

// flush writes an unfinished last line.
func (l *lineWriter) flush() {
	if len(l.buf) > 0 {
		l.emit(l.buf)
		l.buf = nil
	}
}

//go:build linux

package executor

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// cappedLog is a task's log fed through a pipe by the supervisor, so
// that it stops at a size with a marker: what the task writes beyond is
// read and dropped, and the task never blocks on a full disk of its own
// making.
type cappedLog struct {
	r, f *os.File
	max  int64
	// tee, when set, gets all the task writes, beyond the cap too
	// (sbatch's -o and -e files, the user's own).
	tee *os.File
}

// openCapped opens the log at path (appended to) behind a pipe and
// returns the pipe's end the task writes to.
func openCapped(path string, max int64) (*os.File, *cappedLog, error) {
	f, err := openLog(path)
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("the task's log pipe: %w", err)
	}
	return w, &cappedLog{r: r, f: f, max: max}, nil
}

// TruncatedMarker ends a log cut at Spec.OutputMax.
const TruncatedMarker = "\n[corral: output truncated: the task wrote more than its output cap (--max-output, or its tenant's --disk) of %d bytes; the rest was dropped]\n"

// copy copies the task's output into the log up to the cap, writes the
// marker when the task wrote more, and drops the rest until every
// writer has closed the pipe; the tee gets everything. A write the
// disk refuses drops the rest of the log as well: the task goes on.
func (c *cappedLog) copy() {
	defer c.r.Close()
	defer c.f.Close()
	room := c.max
	if fi, err := c.f.Stat(); err == nil {
		room -= fi.Size()
	}
	buf := make([]byte, 32<<10)
	logging, marked := room > 0, false
	for {
		n, err := c.r.Read(buf)
		if n > 0 {
			if c.tee != nil {
				c.tee.Write(buf[:n]) // the user's file: a full disk there is theirs
			}
			logging, marked = c.log(buf[:n], &room, logging, marked)
		}
		if err != nil {
			return
		}
	}
}

// log writes p to the log while there is room, and the marker once
// when there is not.
func (c *cappedLog) log(p []byte, room *int64, logging, marked bool) (bool, bool) {
	if logging {
		k := min(int64(len(p)), *room)
		if _, err := c.f.Write(p[:k]); err != nil {
			return false, true // the disk refused: drop the rest, no marker
		}
		*room -= k
		p = p[k:]
		logging = *room > 0
	}
	if len(p) > 0 && !marked {
		fmt.Fprintf(c.f, TruncatedMarker, c.max)
		marked = true
	}
	return logging, marked
}

// startCopies starts copying the capped logs; wg is done when they are.
func startCopies(logs []*cappedLog, wg *sync.WaitGroup) {
	for _, c := range logs {
		wg.Add(1)
		go func() { defer wg.Done(); c.copy() }()
	}
}

// closeCapped closes the logs of a task that did not start.
func closeCapped(logs []*cappedLog) {
	for _, c := range logs {
		c.r.Close()
		c.f.Close()
	}
}

// waitCopies waits up to limit for the copies to finish: a process
// stuck in the kernel may hold the pipe open.
func waitCopies(wg *sync.WaitGroup, limit time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
	}
}

// exitReserve is the size of the file that holds room for the exit
// record, so that a task that ends on a full disk still has its end
// recorded.
const exitReserve = 64 << 10

func (s Spec) reservePath() string { return s.path(".reserve") }

// reserveExitRoom writes the reserve file; on a disk already full it
// fails, and the task is not started.
func reserveExitRoom(s Spec) error {
	f, err := os.OpenFile(s.reservePath(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("reserving room for the exit record: %w", err)
	}
	_, err = f.Write(make([]byte, exitReserve))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(s.reservePath())
		return fmt.Errorf("reserving room for the exit record: %w", err)
	}
	return nil
}

// writeExit writes the exit record; when the disk is full, the reserve
// is given up first to make room.
func writeExit(s Spec, res Result) error {
	err := writeJSON(s.exitPath(), res)
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		os.Remove(s.reservePath())
		err = writeJSON(s.exitPath(), res)
	}
	os.Remove(s.reservePath())
	return err
}

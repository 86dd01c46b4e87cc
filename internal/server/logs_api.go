package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/corral-sched/corral/internal/store"
)

// followPoll is how often a followed log is checked for more output.
const followPoll = 200 * time.Millisecond

// maxTail bounds ?tail=: the lines a tail may ask for.
const maxTail = 100000

// logWindow is where in the log an answer starts: at Offset bytes, or
// at the start of the last Tail lines.
type logWindow struct {
	Offset int64
	Tail   int
}

// handleLogs sends a task's output: ?rank= (default 0), ?stream=stdout or
// stderr, ?follow=true to keep sending until the job ends; ?tail=N
// starts at the last N lines, ?offset=B at byte B. An answer that does
// not follow says in X-Log-Offset the offset where it ends, and in
// X-Log-Attempt whose log it is: the next ?offset= to ask for what is new.
func (s *Server) handleLogs(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	j, ok := s.jobFor(w, r, who)
	if !ok {
		return
	}
	q := r.URL.Query()
	rank, suffix, win, err := logQuery(q, max(j.Spec.Tasks, 1))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	follow := q.Get("follow") == "true" || q.Get("follow") == "1"
	if j.Attempts == 0 && !follow {
		writeError(w, http.StatusNotFound, fmt.Sprintf("job %s has not started yet: no logs", j.Name()))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !follow {
		s.sendLog(w, &j, rank, suffix, win)
		return
	}
	w.WriteHeader(http.StatusOK)
	s.streamLog(w, r, j, rank, suffix, win)
}

// logQuery reads the rank, the stream and the window of a logs request.
func logQuery(q url.Values, tasks int) (int, string, logWindow, error) {
	var win logWindow
	rank, err := intParam(q, "rank", 0, tasks-1)
	if err != nil {
		return 0, "", win, err
	}
	suffix := ".out"
	switch q.Get("stream") {
	case "", "stdout":
	case "stderr":
		suffix = ".err"
	default:
		return 0, "", win, errors.New("stream: want stdout or stderr")
	}
	if win.Tail, err = intParam(q, "tail", 0, maxTail); err != nil {
		return 0, "", win, err
	}
	off, err := intParam(q, "offset", 0, math.MaxInt)
	if err == nil && off > 0 && win.Tail > 0 {
		err = errors.New("give tail or offset, not both")
	}
	win.Offset = int64(off)
	return rank, suffix, win, err
}

// intParam is the integer query parameter name, lo..hi; lo when absent.
func intParam(q url.Values, name string, lo, hi int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return lo, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s %q: want %d..%d", name, v, lo, hi)
	}
	return n, nil
}

// sendLog sends the window of the log as it is now, and where it ends.
func (s *Server) sendLog(w http.ResponseWriter, j *store.Job, rank int, suffix string, win logWindow) {
	f, err := os.Open(s.logPath(j, rank, suffix))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("log of %s: %v", j.Name(), err))
		return
	}
	if f == nil {
		if note := s.removedNote(j); note != "" {
			writeError(w, http.StatusGone, note)
			return
		}
	}
	var start, end int64
	if f != nil {
		defer f.Close()
		if start, end, err = seekWindow(f, win); err != nil {
			writeError(w, http.StatusInternalServerError, fmt.Sprintf("log of %s: %v", j.Name(), err))
			return
		}
	}
	w.Header().Set("X-Log-Offset", strconv.FormatInt(end, 10))
	w.Header().Set("X-Log-Attempt", strconv.Itoa(j.Attempts))
	w.WriteHeader(http.StatusOK)
	if f != nil {
		io.CopyN(w, f, end-start)
	}
}

// seekWindow moves f to the window's start and returns it with the
// log's size now: what the answer holds is start..end.
func seekWindow(f *os.File, win logWindow) (start, end int64, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	end = fi.Size()
	start = min(win.Offset, end)
	if win.Tail > 0 {
		if start, err = tailStart(f, end, win.Tail); err != nil {
			return 0, 0, err
		}
	}
	_, err = f.Seek(start, io.SeekStart)
	return start, end, err
}

// tailStart is the offset of the first of the last n lines of the
// first size bytes of f (a last line without its newline counts).
func tailStart(f *os.File, size int64, n int) (int64, error) {
	buf := make([]byte, 32<<10)
	pos, lines := size, 0
	for pos > 0 {
		chunk := min(int64(len(buf)), pos)
		if _, err := f.ReadAt(buf[:chunk], pos-chunk); err != nil {
			return 0, err
		}
		for i := chunk - 1; i >= 0; i-- {
			if buf[i] != '\n' || pos-chunk+i == size-1 {
				continue
			}
			if lines++; lines == n {
				return pos - chunk + i + 1, nil
			}
		}
		pos -= chunk
	}
	return 0, nil
}

// logPath is where rank of the job's latest attempt writes.
func (s *Server) logPath(j *store.Job, rank int, suffix string) string {
	return filepath.Join(s.taskDir(j), j.Name()+"-"+strconv.Itoa(rank)+suffix)
}

// streamLog copies the log from the window's start and keeps copying
// what is appended until the job has ended and the file is drained, or
// the client goes away.
func (s *Server) streamLog(w http.ResponseWriter, r *http.Request, j store.Job, rank int, suffix string, win logWindow) {
	flusher, _ := w.(http.Flusher)
	var f *os.File
	attempt := j.Attempts
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for {
		if f == nil && j.Attempts > 0 {
			var err error
			f, err = os.Open(s.logPath(&j, rank, suffix))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return
			}
			if f != nil {
				if _, _, err := seekWindow(f, win); err != nil {
					return
				}
				win = logWindow{} // a later attempt's log is sent whole
			}
		}
		if f != nil {
			if _, err := io.Copy(w, f); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		ended := j.State.Final()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(followPoll):
		}
		if ended {
			return
		}
		cur, err := s.st.Get(j.ID)
		if err != nil {
			return
		}
		if cur.Attempts != attempt && f != nil { // a new attempt writes a new file
			io.Copy(w, f)
			f.Close()
			f = nil
		}
		attempt, j = cur.Attempts, cur
	}
}

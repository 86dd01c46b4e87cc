package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/corral-sched/corral/internal/store"
)

// followPoll is how often a followed log is checked for more output.
const followPoll = 200 * time.Millisecond

// handleLogs sends a task's output: ?rank= (default 0), ?stream=stdout or
// stderr, ?follow=true to keep sending until the job ends.
func (s *Server) handleLogs(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	j, ok := s.jobFor(w, r, who)
	if !ok {
		return
	}
	q := r.URL.Query()
	rank, err := strconv.Atoi(q.Get("rank"))
	if q.Get("rank") == "" {
		rank, err = 0, nil
	}
	if err != nil || rank < 0 || rank >= max(j.Spec.Tasks, 1) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("rank %q: want 0..%d", q.Get("rank"), max(j.Spec.Tasks, 1)-1))
		return
	}
	suffix := ".out"
	switch q.Get("stream") {
	case "", "stdout":
	case "stderr":
		suffix = ".err"
	default:
		writeError(w, http.StatusBadRequest, "stream: want stdout or stderr")
		return
	}
	follow := q.Get("follow") == "true" || q.Get("follow") == "1"
	if j.Attempts == 0 && !follow {
		writeError(w, http.StatusNotFound, fmt.Sprintf("job %s has not started yet: no logs", j.Name()))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	s.streamLog(w, r, j, rank, suffix, follow)
}

// logPath is where rank of the job's latest attempt writes.
func (s *Server) logPath(j *store.Job, rank int, suffix string) string {
	return filepath.Join(s.taskDir(j), j.Name()+"-"+strconv.Itoa(rank)+suffix)
}

// streamLog copies the log, and when following keeps copying what is
// appended until the job has ended and the file is drained, or the
// client goes away.
func (s *Server) streamLog(w http.ResponseWriter, r *http.Request, j store.Job, rank int, suffix string, follow bool) {
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
		}
		if f != nil {
			if _, err := io.Copy(w, f); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if !follow {
			return
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

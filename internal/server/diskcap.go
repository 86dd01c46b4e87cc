package server

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/store"
)

// A tenant's disk cap (store.Tenant.DiskMiB, `corral server tenant
// create/set --disk`) bounds what its jobs keep in the server's state
// directory: their logs, and the work directories of jobs run without
// --workdir. Each log of its tasks is cut at the cap (and at
// --max-output, whichever is smaller); when its jobs together keep more,
// the files of its oldest ended jobs are removed, oldest first, until
// they fit, the newest ended job's always kept. A job whose files were
// removed keeps its record and accounting; its logs answer 410 Gone,
// saying why. --min-free still refuses every submission when the disk
// itself runs low.

// removedMarker is the file left in a job's directory whose files were
// removed under its tenant's disk cap, saying so.
const removedMarker = "removed-under-disk-cap"

// outputMax caps each log of j's tasks: --max-output, lowered to the
// tenant's disk cap; 0 for no cap. The caller holds s.mu.
func (s *Server) outputMax(j *store.Job) int64 {
	m := max(s.cfg.MaxOutputBytes, 0)
	if c := s.tenants[j.Tenant].DiskMiB << 20; c > 0 && (m == 0 || c < m) {
		m = c
	}
	return m
}

// fitDiskCapSoon asks the disk cap's worker to bring the tenant's files
// under its cap. The caller holds s.mu.
func (s *Server) fitDiskCapSoon(tenant string) {
	if s.tenants[tenant].DiskMiB <= 0 {
		return
	}
	if s.overCap == nil {
		s.overCap = map[string]bool{}
	}
	s.overCap[tenant] = true
	select {
	case s.capKick <- struct{}{}:
	default:
	}
}

// diskCapLoop fits the tenants' files under their caps when asked,
// beside the scheduling loop (it reads and removes files, which the
// cycle must not wait for), until ctx ends or the server stops.
func (s *Server) diskCapLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stopped:
			return
		case <-s.capKick:
		}
		s.mu.Lock()
		caps := map[string]int64{}
		for t := range s.overCap {
			caps[t] = s.tenants[t].DiskMiB << 20
		}
		s.overCap = nil
		s.mu.Unlock()
		for _, t := range slices.Sorted(maps.Keys(caps)) {
			if caps[t] > 0 {
				if err := s.fitDiskCap(t, caps[t]); err != nil {
					s.log.Error("disk cap", "tenant", t, "err", err)
				}
			}
		}
	}
}

// keptFiles is an ended job and the bytes its directory holds.
type keptFiles struct {
	job   store.Job
	bytes int64
}

// fitDiskCap removes the files of the tenant's oldest ended jobs until
// what its jobs keep is at most capBytes, or only the newest ended job's
// are left.
func (s *Server) fitDiskCap(tenant string, capBytes int64) error {
	jobs, err := s.st.List(store.Filter{Tenant: tenant})
	if err != nil {
		return fmt.Errorf("listing the tenant's jobs: %w", err)
	}
	var total int64
	var ended []keptFiles
	for _, j := range jobs {
		if j.Attempts == 0 {
			continue
		}
		n := dirBytes(s.jobDir(&j))
		total += n
		if j.State.Final() && n > 0 {
			ended = append(ended, keptFiles{j, n})
		}
	}
	if total <= capBytes || len(ended) < 2 {
		return nil
	}
	slices.SortFunc(ended, func(a, b keptFiles) int {
		return cmp.Or(a.job.Ended.Compare(b.job.Ended), cmp.Compare(a.job.ID, b.job.ID))
	})
	var removed []string
	for _, k := range ended[:len(ended)-1] {
		if total <= capBytes {
			break
		}
		if ok, err := s.removeJobFiles(&k.job, capBytes); err != nil || !ok {
			if err != nil {
				return err
			}
			continue
		}
		total -= k.bytes
		removed = append(removed, k.job.Name())
	}
	s.log.Info("disk cap: removed the files of the tenant's oldest ended jobs", "tenant", tenant,
		"cap", byteString(capBytes), "kept", byteString(total), "jobs", strings.Join(removed, ","))
	return nil
}

// jobDir holds every attempt of j (taskDir).
func (s *Server) jobDir(j *store.Job) string { return filepath.Join(s.cfg.StateDir, j.Name()) }

// removeJobFiles removes what j's directory holds and leaves a note of
// why, unless j was requeued since it was listed (false).
func (s *Server) removeJobFiles(j *store.Job, capBytes int64) (bool, error) {
	if now, err := s.st.Get(j.ID); err != nil || !now.State.Final() || now.Attempts != j.Attempts {
		return false, nil
	}
	dir := s.jobDir(j)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("job %s's files: %w", j.Name(), err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return false, fmt.Errorf("job %s's files: %w", j.Name(), err)
		}
	}
	note := fmt.Sprintf("the files of job %s were removed at %s: tenant %s's jobs kept more than its disk cap of %s, and the oldest ended jobs' files go first",
		j.Name(), s.now().UTC().Format("2006-01-02T15:04:05Z"), j.Tenant, byteString(capBytes))
	return true, os.WriteFile(filepath.Join(dir, removedMarker), []byte(note+"\n"), 0o600)
}

// removedNote says why j's files are gone, or is "" when they were not
// removed under a disk cap.
func (s *Server) removedNote(j *store.Job) string {
	b, err := os.ReadFile(filepath.Join(s.jobDir(j), removedMarker))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// dirBytes is what the regular files under dir hold; 0 for a directory
// whose files were removed under a disk cap, or that is not there.
func dirBytes(dir string) int64 {
	if _, err := os.Stat(filepath.Join(dir, removedMarker)); err == nil {
		return 0
	}
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone meanwhile, or unreadable: counted as nothing
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

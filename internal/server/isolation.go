package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// RunAs says whose Unix user the server's jobs run as.
type RunAs int

const (
	// RunAsServer runs every job as the server's own user: tenants are
	// fenced from one another only by the API, not by the kernel.
	RunAsServer RunAs = iota
	// RunAsServerOneTenant runs every job as the server's own user, and
	// takes the jobs of one tenant at a time: New fails when jobs of
	// several tenants wait or run, and a submission is refused while
	// another tenant's jobs do. It is what a server not run by root
	// does unless told that one user for all is fine (--single-user).
	RunAsServerOneTenant
	// RunAsTenant runs each job as its tenant's Unix user
	// (store.Tenant's UnixUser, UID, GID); a tenant without one cannot
	// submit. It needs root, and never runs a job as root.
	RunAsTenant
)

// isolation is what New found out about fencing jobs.
type isolation struct {
	cgroups  *executor.Cgroups // nil: tasks have no cgroups
	minors   map[int]int       // GPU index -> minor number of /dev/nvidiaN
	problems []string          // what does not hold, in words
}

// setupIsolation checks the RunAs mode, opens the tasks' cgroups when
// asked, tightens the modes of the database and the state directory, and
// says what does not hold. The caller logs s.iso.problems.
func (s *Server) setupIsolation() error {
	if s.cfg.RunAs == RunAsTenant && os.Geteuid() != 0 {
		return fmt.Errorf("jobs can run as their tenants' users only when the server runs as root; it runs as uid %d", os.Geteuid())
	}
	s.iso.minors = gpuMinors(s.gpus)
	s.iso.problems = s.userProblems()
	if err := s.protectFiles(); err != nil {
		return err
	}
	if !s.cfg.Cgroups {
		s.iso.problems = append(s.iso.problems, noCgroups("cgroups are off"))
		return nil
	}
	c, err := executor.OpenCgroups(cgroupName(s.cfg.StateDir))
	if err != nil {
		s.iso.problems = append(s.iso.problems, noCgroups(err.Error()))
		return nil
	}
	s.iso.cgroups = c
	s.iso.problems = append(s.iso.problems, c.Problems...)
	return nil
}

// noCgroups says what is lost without cgroups, and why there are none.
func noCgroups(why string) string {
	return "no cgroups (" + why + "): a process that leaves its task's process group can outlive the task, " +
		"memory and CPU requests are not enforced, and a task can open every GPU (CUDA_VISIBLE_DEVICES is the only fence)"
}

// userProblems says what the RunAs mode leaves open.
func (s *Server) userProblems() []string {
	if s.cfg.RunAs == RunAsTenant {
		return nil
	}
	self := serverUser()
	if os.Geteuid() == 0 {
		return []string{"every job runs as root, the server's user: it can read the database and signal anything"}
	}
	return []string{fmt.Sprintf("every job runs as %s, the server's user (not root): tenants' jobs can read one another's "+
		"files and the database, and signal one another's processes", self)}
}

func serverUser() string {
	u := executor.User{}
	if cur, err := executor.LookupUser(strconv.Itoa(os.Geteuid())); err == nil {
		u = cur
	}
	if u.Name == "" {
		return "uid " + strconv.Itoa(os.Geteuid())
	}
	return fmt.Sprintf("%s (uid %d)", u.Name, u.UID)
}

// cgroupName names the server's cgroup directory after its state
// directory, so that two servers on a machine never share one, and a
// restarted server finds its tasks' cgroups again.
func cgroupName(stateDir string) string {
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		abs = stateDir
	}
	sum := sha256.Sum256([]byte(abs))
	return "corral-" + hex.EncodeToString(sum[:4])
}

// protectFiles makes the database readable by the server alone and,
// when jobs run as their tenants, the state directory traversable but
// not listable by them: each reaches its own jobs' directories, which
// are its own (0700), and nothing else.
func (s *Server) protectFiles() error {
	if fi, err := os.Stat(s.st.Path()); err == nil && fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(s.st.Path(), 0o600); err != nil {
			return fmt.Errorf("server: making the database private: %w", err)
		}
	}
	if s.cfg.RunAs != RunAsTenant {
		return nil
	}
	if err := os.Chmod(s.cfg.StateDir, 0o711); err != nil {
		return fmt.Errorf("server: state dir: %w", err)
	}
	if p := unreachable(filepath.Dir(s.cfg.StateDir)); p != "" {
		s.iso.problems = append(s.iso.problems, fmt.Sprintf("jobs cannot reach their directories under %s: %s is not searchable by other users (chmod o+x it, or give --state-dir elsewhere)", s.cfg.StateDir, p))
	}
	return nil
}

// unreachable returns the first directory from dir up to / that other
// users cannot search (no o+x), or "".
func unreachable(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := abs; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// Isolation says how jobs are fenced on this server and what does not
// hold; /v1/gpus and corral gpus show it, and corral server prints it at
// start.
func (s *Server) Isolation() api.Isolation {
	out := api.Isolation{RunAs: "server", User: serverUser(), Cgroups: "none", Problems: slices.Clone(s.iso.problems)}
	if s.cfg.RunAs == RunAsTenant {
		out.RunAs = "tenant"
	}
	if c := s.iso.cgroups; c != nil {
		out.Cgroups = c.String()
		out.Limits = c.Has("memory") && c.Has("cpu")
		out.Devices = c.Devices != ""
	}
	return out
}

// tenantUser is the Unix account a tenant's jobs run as: UnixUser looked
// up, or UID (looked up when it has an account; else it needs a GID),
// with GID as its primary group when given. Root is refused: a job run as
// root could read the database and signal the server.
func tenantUser(t store.Tenant) (*executor.User, error) {
	if t.UnixUser == "" && t.UID == 0 {
		return nil, fmt.Errorf("tenant %s has no Unix user to run jobs as: an admin sets one with 'corral server tenant set %s --unix-user NAME'", t.Name, t.Name)
	}
	name := t.UnixUser
	if name == "" {
		name = strconv.FormatUint(uint64(t.UID), 10)
	}
	u, err := executor.LookupUser(name)
	switch {
	case err != nil && t.UnixUser == "" && t.GID != 0:
		u = executor.User{UID: t.UID, GID: t.GID, Home: "/"} // a uid with no account
	case err != nil:
		return nil, fmt.Errorf("tenant %s: %w", t.Name, err)
	case t.UID != 0 && u.UID != t.UID:
		return nil, fmt.Errorf("tenant %s: unix user %s has uid %d, not %d", t.Name, t.UnixUser, u.UID, t.UID)
	}
	if t.GID != 0 {
		u.GID = t.GID
	}
	if u.UID == 0 || u.GID == 0 {
		return nil, fmt.Errorf("tenant %s: its jobs would run as root (uid %d, gid %d): they could read the database and every tenant's files", t.Name, u.UID, u.GID)
	}
	return &u, nil
}

// jobUser is the Unix account the tasks of a tenant's job run as: nil
// (the server's own) unless the server runs jobs as their tenants.
func (s *Server) jobUser(tenant string) (*executor.User, error) {
	if s.cfg.RunAs != RunAsTenant {
		return nil, nil
	}
	t, err := s.st.Tenant(tenant)
	if err != nil {
		return nil, fmt.Errorf("the job's tenant: %w", err)
	}
	return tenantUser(t)
}

// admitTenant refuses a submission the RunAs mode cannot honour: from a
// tenant without a Unix user when jobs run as their tenants, or from a
// second tenant while one's jobs wait or run on a one-tenant server.
func (s *Server) admitTenant(who store.Tenant) error {
	switch s.cfg.RunAs {
	case RunAsTenant:
		if _, err := tenantUser(who); err != nil {
			return &httpError{http.StatusForbidden, err}
		}
	case RunAsServerOneTenant:
		if other := s.otherActiveTenant(who.Name); other != "" {
			return &httpError{http.StatusConflict, fmt.Errorf("this server runs every job as its own user %s (it does not run as root), so it takes one tenant's jobs at a time, "+
				"and tenant %s has jobs waiting or running; an admin can run it as root, or start it with --single-user to share that user", serverUser(), other)}
		}
	}
	return nil
}

// otherActiveTenant returns a tenant other than name with jobs waiting or
// running (admitted or just submitted), or "".
func (s *Server) otherActiveTenant(name string) string {
	s.mu.Lock()
	for _, t := range s.activeTenants() {
		if t != name {
			s.mu.Unlock()
			return t
		}
	}
	s.mu.Unlock()
	s.inMu.Lock()
	ids := slices.Clone(s.incoming)
	s.inMu.Unlock()
	for _, id := range ids {
		if j, err := s.st.Get(id); err == nil && j.Tenant != name && !j.State.Final() {
			return j.Tenant
		}
	}
	return ""
}

// activeTenants are the tenants with jobs waiting or running, sorted.
// The caller holds s.mu.
func (s *Server) activeTenants() []string {
	seen := map[string]bool{}
	for _, j := range s.waiting {
		seen[j.Tenant] = true
	}
	for _, r := range s.runs {
		seen[r.job.Tenant] = true
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// checkOneTenant fails a one-tenant server that recovered the jobs of
// several tenants.
func (s *Server) checkOneTenant() error {
	if s.cfg.RunAs != RunAsServerOneTenant {
		return nil
	}
	if ts := s.activeTenants(); len(ts) > 1 {
		return fmt.Errorf("jobs of tenants %s wait or run, and this server would run them all as its own user %s (it does not run as root): "+
			"run it as root so that each runs as its tenant's Unix user, or pass --single-user to run them all as %s anyway",
			strings.Join(ts, ", "), serverUser(), serverUser())
	}
	return nil
}

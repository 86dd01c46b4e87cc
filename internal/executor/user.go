package executor

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// User is the Unix account a task runs as. The supervisor keeps the
// server's user (root) and starts the task with these credentials, so
// that it can still signal and reap the task.
type User struct {
	Name   string `json:",omitempty"` // login name: USER and LOGNAME (the uid when empty)
	UID    uint32
	GID    uint32   // primary group
	Groups []uint32 `json:",omitempty"` // supplementary groups; none when empty
	Home   string   `json:",omitempty"` // HOME ("/" when empty)
}

// DefaultPath is the PATH of a task whose Spec.Env sets none.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

// LookupUser resolves a Unix account by login name, or by numeric uid when
// name is a number: its uid, primary gid, supplementary groups and home.
func LookupUser(name string) (User, error) {
	var u *user.User
	var err error
	if _, nerr := strconv.ParseUint(name, 10, 32); nerr == nil {
		u, err = user.LookupId(name)
	} else {
		u, err = user.Lookup(name)
	}
	if err != nil {
		return User{}, fmt.Errorf("unix user %s: %w", name, err)
	}
	return fromOSUser(u)
}

func fromOSUser(u *user.User) (User, error) {
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return User{}, fmt.Errorf("unix user %s: uid %q: %w", u.Username, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return User{}, fmt.Errorf("unix user %s: gid %q: %w", u.Username, u.Gid, err)
	}
	out := User{Name: u.Username, UID: uint32(uid), GID: uint32(gid), Home: u.HomeDir}
	ids, err := u.GroupIds()
	if err != nil {
		return out, nil // no group database answer: no supplementary groups
	}
	for _, id := range ids {
		if g, err := strconv.ParseUint(id, 10, 32); err == nil && uint32(g) != out.GID {
			out.Groups = append(out.Groups, uint32(g))
		}
	}
	return out, nil
}

// currentUser is the account this process runs as: the User of a task
// whose Spec.User is nil.
var currentUser = sync.OnceValue(func() User {
	self := User{Name: strconv.Itoa(os.Getuid()), UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), Home: "/"}
	if u, err := user.LookupId(strconv.Itoa(os.Getuid())); err == nil {
		if found, err := fromOSUser(u); err == nil {
			self.Name, self.Home = found.Name, found.Home
		}
	}
	return self
})

// switches reports whether a task of u runs under credentials other than
// this process's: never for a nil User, nor for this process's own uid
// and gid when it is not root (it could not set its groups).
func (u *User) switches() bool {
	if u == nil {
		return false
	}
	return os.Geteuid() == 0 || u.UID != uint32(os.Geteuid()) || u.GID != uint32(os.Getegid())
}

// validate reports why this process cannot start a task as u.
func (u *User) validate() error {
	if !u.switches() || os.Geteuid() == 0 {
		return nil
	}
	return fmt.Errorf("cannot run a task as uid %d gid %d: this process runs as uid %d, not root", u.UID, u.GID, os.Geteuid())
}

// accountEnv is HOME, USER and LOGNAME of the account a task runs as
// (this process's for a nil User). They come after what the submitter
// sent, whose own HOME or USER may be another machine's or another
// user's, and say what the task runs as.
func accountEnv(u *User) []string {
	self := currentUser()
	if u == nil {
		u = &self
	}
	home, name := u.Home, u.Name
	if home == "" {
		home = "/"
	}
	if name == "" {
		name = strconv.FormatUint(uint64(u.UID), 10)
	}
	return []string{"HOME=" + home, "USER=" + name, "LOGNAME=" + name}
}

// lookPath finds the program a task runs: a name with a slash as it is,
// else the first executable file of that name in the PATH of the task's
// environment env (not the server's).
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // "." and relative entries would depend on the working directory
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q: %w", name, errNotInPath)
}

var errNotInPath = errors.New("executable file not found in the task's $PATH")

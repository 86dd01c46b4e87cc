//go:build linux

package executor

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// openAsUser opens path for appending as u would: on a thread of its
// own whose file system credentials (fsuid, fsgid, groups) are u's, so
// that the kernel checks u's permissions and a new file is u's. The
// thread is never given back to the runtime: it ends with its
// goroutine, credentials and all. A nil u, or this process's own
// account, opens as this process.
func openAsUser(u *User, path string, truncate bool) (*os.File, error) {
	flag := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if truncate {
		flag |= os.O_TRUNC
	}
	if !u.switches() {
		return os.OpenFile(path, flag, 0o666)
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if err := becomeForFiles(u); err != nil {
			ch <- opened{nil, err}
			return
		}
		f, err := os.OpenFile(path, flag, 0o666)
		ch <- opened{f, err}
	}()
	o := <-ch
	if o.err != nil {
		return nil, fmt.Errorf("opening %s as uid %d: %w", path, u.UID, o.err)
	}
	return o.f, nil
}

// becomeForFiles gives the calling thread u's supplementary groups (as
// the task gets them), fsgid and fsuid; the raw system calls change this
// thread alone.
func becomeForFiles(u *User) error {
	groups := make([]int, len(u.Groups))
	for i, g := range u.Groups {
		groups[i] = int(g)
	}
	if err := unix.Setgroups(groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	unix.Setfsgid(int(u.GID))
	unix.Setfsuid(int(u.UID))
	if uid, _ := unix.SetfsuidRetUid(-1); uid != int(u.UID) {
		return fmt.Errorf("setfsuid %d did not hold", u.UID)
	}
	return nil
}

// userFiles opens the task's OutputFile and ErrorFile as its user: one
// file when both name the same path, nil for one not set.
func userFiles(spec Spec) (out, errf *os.File, err error) {
	if spec.OutputFile != "" {
		if out, err = openAsUser(spec.User, spec.OutputFile, !spec.OutputAppend); err != nil {
			return nil, nil, err
		}
	}
	switch {
	case spec.ErrorFile == "":
	case spec.ErrorFile == spec.OutputFile:
		errf = out
	default:
		if errf, err = openAsUser(spec.User, spec.ErrorFile, !spec.OutputAppend); err != nil {
			if out != nil {
				out.Close()
			}
			return nil, nil, err
		}
	}
	return out, errf, nil
}

package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"golang.org/x/sys/unix"
)

// deviceRule lets a task's cgroup use devices: of a type ('c' or 'b'),
// a major and a minor number (-1: any), with the access in access
// ("r", "w", "m" for mknod).
type deviceRule struct {
	typ          byte
	major, minor int64
	access       string
}

// String is the rule as the v1 devices controller takes it: "c 1:3 rwm".
func (r deviceRule) String() string {
	num := func(n int64) string {
		if n < 0 {
			return "*"
		}
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprintf("%c %s:%s %s", r.typ, num(r.major), num(r.minor), r.access)
}

// basicDevices are the devices every task may use, as container runtimes
// allow them: creating any node (opening one is what the rules decide),
// /dev/null, zero, full, random and urandom, ttys and pseudo-terminals,
// FUSE, and InfiniBand verbs (major 231) for NCCL over RDMA.
var basicDevices = []deviceRule{
	{'c', -1, -1, "m"}, {'b', -1, -1, "m"},
	{'c', 1, 3, "rwm"}, {'c', 1, 5, "rwm"}, {'c', 1, 7, "rwm"}, {'c', 1, 8, "rwm"}, {'c', 1, 9, "rwm"},
	{'c', 5, 0, "rwm"}, {'c', 5, 2, "rwm"}, {'c', 136, -1, "rwm"},
	{'c', 10, 229, "rwm"}, {'c', 231, -1, "rw"},
}

// deviceRules are the rules of a task that may use the basic devices and
// the device files files (those that exist).
func deviceRules(files []string) ([]deviceRule, error) {
	rules := append([]deviceRule(nil), basicDevices...)
	for _, f := range files {
		var st unix.Stat_t
		if err := unix.Stat(f, &st); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("device %s: %w", f, err)
		}
		typ := byte('c')
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFCHR:
		case unix.S_IFBLK:
			typ = 'b'
		default:
			return nil, fmt.Errorf("device %s is not a device file", f)
		}
		rules = append(rules, deviceRule{typ, int64(unix.Major(st.Rdev)), int64(unix.Minor(st.Rdev)), "rw"})
	}
	return rules, nil
}

// setDevicesV1 lets a v1 devices cgroup use only the devices of rules.
func setDevicesV1(dir string, rules []deviceRule) error {
	if err := writeCgroupFile(dir, "devices.deny", "a"); err != nil {
		return err
	}
	for _, r := range rules {
		if err := writeCgroupFile(dir, "devices.allow", r.String()); err != nil {
			return err
		}
	}
	return nil
}

package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/executor"
	"github.com/corral-sched/corral/internal/store"
)

// workDir is where a task of j runs: the job's workdir, else the work
// directory of its attempt, which prepareTaskDirs makes.
func (s *Server) workDir(j *store.Job) string {
	if j.Spec.WorkDir != "" {
		return j.Spec.WorkDir
	}
	return filepath.Join(s.taskDir(j), "work")
}

// prepareTaskDirs makes the directories of an attempt of j. The job's
// and the attempt's directories are the server's and hold the
// supervisors' records and the logs (0600): 0711, so that the job can
// pass through them to its work directory, which is its user's own
// (0700), but cannot list them.
func (s *Server) prepareTaskDirs(j *store.Job, u *executor.User) error {
	dir := s.taskDir(j)
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := mkdirMode(d, 0o711); err != nil {
			return fmt.Errorf("task directory: %w", err)
		}
	}
	if j.Spec.WorkDir != "" {
		return nil
	}
	work := s.workDir(j)
	if err := mkdirMode(work, 0o700); err != nil {
		return fmt.Errorf("work directory: %w", err)
	}
	if u != nil {
		if err := os.Chown(work, int(u.UID), int(u.GID)); err != nil {
			return fmt.Errorf("work directory: %w", err)
		}
	}
	return nil
}

// mkdirMode makes directory dir with mode whatever the umask, or sets the
// mode of the one that exists.
func mkdirMode(dir string, mode fs.FileMode) error {
	if err := os.Mkdir(dir, mode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return os.Chmod(dir, mode)
}

// controlDevices are the NVIDIA driver's device files that every task
// may open, as a GPU container gets them: they lead to no GPU by
// themselves.
var controlDevices = []string{"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"}

// deviceFiles are the device files a task on the GPUs of t may open: the
// driver's control files and /dev/nvidiaN of each of its GPUs. A MIG
// slice gets its GPU's and every MIG capability file: MIG instances of
// one GPU are not fenced from one another.
func (s *Server) deviceFiles(t store.Task) []string {
	dev := s.cfg.DevDir
	if dev == "" {
		dev = "/dev"
	}
	var files []string
	for _, name := range controlDevices {
		files = append(files, filepath.Join(dev, name))
	}
	for _, g := range t.GPUs {
		minor, ok := s.iso.minors[g]
		if !ok {
			minor = g
		}
		files = append(files, filepath.Join(dev, "nvidia"+strconv.Itoa(minor)))
	}
	if t.MIG != "" {
		caps, _ := filepath.Glob(filepath.Join(dev, "nvidia-caps", "*"))
		files = append(files, caps...)
	}
	return files
}

// driverInfo is where the NVIDIA driver describes each GPU it drives.
var driverInfo = "/proc/driver/nvidia/gpus/*/information"

// gpuMinors maps each GPU's index to the minor number of its device
// file, /dev/nvidiaN, which the driver tells by UUID: NVML's index (PCI
// order) and the minor number usually agree, but need not. A GPU the
// driver does not list (a declared one) is left out: its index is used.
func gpuMinors(gpus []GPU) map[int]int {
	byUUID := map[string]int{}
	files, _ := filepath.Glob(driverInfo)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if uuid, minor, ok := parseDriverInfo(string(data)); ok {
			byUUID[uuid] = minor
		}
	}
	out := map[int]int{}
	for _, g := range gpus {
		if m, ok := byUUID[g.UUID]; ok {
			out[g.Index] = m
		}
	}
	return out
}

// parseDriverInfo reads "GPU UUID:" and "Device Minor:" from the text of
// a GPU's information file.
func parseDriverInfo(text string) (uuid string, minor int, ok bool) {
	minor = -1
	for _, line := range strings.Split(text, "\n") {
		key, value, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		switch strings.TrimSpace(key) {
		case "GPU UUID":
			uuid = strings.TrimSpace(value)
		case "Device Minor":
			if n, err := strconv.Atoi(strings.TrimSpace(value)); err == nil {
				minor = n
			}
		}
	}
	return uuid, minor, uuid != "" && minor >= 0
}

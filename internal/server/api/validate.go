package api

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/eligible"
	"github.com/corral-sched/corral/internal/slurmfmt"
)

// Limits on a request.
const (
	MaxTasks    = 64
	MaxArgs     = 1024
	MaxArgBytes = 16 << 10
	MaxEnv      = 1024
	MaxPriority = 1_000_000
	// MaxScript is the largest batch script a request carries.
	MaxScript = 512 << 10
)

var (
	nameRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
	envKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	migRE    = regexp.MustCompile(`^[1-9]g\.[1-9][0-9]{0,2}gb$`)
)

// ValidName reports whether s may name a job, tenant or queue: letters,
// digits, '.', '_' and '-', starting with a letter or digit, at most 63
// characters. No name can climb out of a directory.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// ValidMIG reports whether s is shaped like a MIG profile (1g.10gb).
func ValidMIG(s string) bool { return migRE.MatchString(s) }

// Durations are a request's parsed durations.
type Durations struct {
	Time, CheckpointEvery, Grace time.Duration
}

// Validate checks everything about r that does not depend on the machine
// and returns its durations. The message of the error lists every
// problem.
func (r *JobRequest) Validate() (Durations, error) {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if r.Name != "" && !ValidName(r.Name) {
		add("name %q: use letters, digits, '.', '_' and '-' (at most 63, starting with a letter or digit)", r.Name)
	}
	if r.Queue != "" && !ValidName(r.Queue) {
		add("queue %q: use letters, digits, '.', '_' and '-'", r.Queue)
	}
	r.validateCommand(add)
	r.validateDemand(add)
	r.validateBatch(add)
	d := r.durations(add)
	if r.Priority < -MaxPriority || r.Priority > MaxPriority {
		add("priority %d: want -%d..%d", r.Priority, MaxPriority, MaxPriority)
	}
	return d, errors.Join(errs...)
}

// durations parses the time limit (a Go duration or one of Slurm's
// forms) and the other durations (Go durations).
func (r *JobRequest) durations(add func(string, ...any)) Durations {
	var d Durations
	if r.Time != "" {
		v, err := slurmfmt.ParseTime(r.Time)
		if err != nil {
			add("time %q: %v", truncate(r.Time, 40), err)
		}
		d.Time = v
	}
	for _, f := range []struct {
		name string
		s    string
		to   *time.Duration
	}{{"checkpoint_every", r.CheckpointEvery, &d.CheckpointEvery}, {"grace", r.Grace, &d.Grace}} {
		if f.s == "" {
			continue
		}
		v, err := time.ParseDuration(f.s)
		if err != nil || v < 0 {
			add("%s %q: want a duration such as 90s, 30m or 2h", f.name, truncate(f.s, 40))
			continue
		}
		*f.to = v
	}
	return d
}

// imageRE accepts image references: registry, path, tag and digest, and
// nothing a shell or a runtime's flag parser could take for more.
var imageRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._/:@+-]{0,254}$`)

func (r *JobRequest) validateCommand(add func(string, ...any)) {
	switch {
	case len(r.Command) == 0:
		add("command: empty; give the program and its arguments")
	case len(r.Command) > MaxArgs:
		add("command: %d arguments, at most %d", len(r.Command), MaxArgs)
	case r.Command[0] == "":
		add("command: the program name is empty")
	}
	for i, a := range r.Command {
		if len(a) > MaxArgBytes || strings.ContainsRune(a, 0) {
			add("command argument %d: longer than %d bytes or holds a NUL", i, MaxArgBytes)
		}
	}
	if r.WorkDir != "" && (!filepath.IsAbs(r.WorkDir) || filepath.Clean(r.WorkDir) != r.WorkDir || strings.ContainsRune(r.WorkDir, 0)) {
		add("workdir %q: want a clean absolute path", r.WorkDir)
	}
	if r.Image != "" && !imageRE.MatchString(r.Image) {
		add("image %q: want a container image reference such as registry/name:tag", truncate(r.Image, 60))
	}
	if len(r.Env) > MaxEnv {
		add("env: %d entries, at most %d", len(r.Env), MaxEnv)
	}
	for _, kv := range r.Env {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok || !envKeyRE.MatchString(k) || strings.ContainsRune(v, 0):
			add("env %q: want KEY=VALUE with KEY of letters, digits and '_'", truncate(kv, 40))
		case len(v) > MaxArgBytes:
			add("env %s: value of %d bytes, at most %d", k, len(v), MaxArgBytes)
		}
	}
}

func (r *JobRequest) validateDemand(add func(string, ...any)) {
	set := 0
	if r.GPUs != 0 {
		set++
	}
	if r.MIG != "" {
		set++
	}
	if r.Share != 0 {
		set++
	}
	if set > 1 {
		add("ask for one of gpus, mig and share, not %d of them", set)
	}
	if r.GPUs < 0 {
		add("gpus %d: must not be negative", r.GPUs)
	}
	if r.MIG != "" && !migRE.MatchString(r.MIG) {
		add("mig %q: want a MIG profile such as 1g.10gb or 3g.40gb", r.MIG)
	}
	if r.Share != 0 && !(r.Share > 0 && r.Share < 1) {
		add("share %v: want a fraction of one GPU, above 0 and below 1 (ask for gpus instead)", r.Share)
	}
	if r.CPU < 0 || r.CPU > 1e6 || r.MemoryMiB < 0 {
		add("cpu %v and memory_mib %d must not be negative", r.CPU, r.MemoryMiB)
	}
	if r.Tasks < 0 || r.Tasks > MaxTasks {
		add("tasks %d: want 1..%d", r.Tasks, MaxTasks)
	}
	r.validateMemoryAsk(set, add)
}

// validateMemoryAsk checks an ask by GPU memory: alone, since the
// scheduler picks the GPUs and the tasks.
func (r *JobRequest) validateMemoryAsk(gpuFields int, add func(string, ...any)) {
	switch {
	case r.GPUMemoryMiB < 0 || r.GPUMemoryPerGPUMiB < 0:
		add("gpu_memory_mib %d and gpu_memory_per_gpu_mib %d must not be negative", r.GPUMemoryMiB, r.GPUMemoryPerGPUMiB)
	case r.GPUMemoryMiB == 0 && (r.GPUMemoryPerGPUMiB > 0 || len(r.GPUModels) > 0):
		add("gpu_memory_per_gpu_mib and gpu_models go with gpu_memory_mib (the GPU memory in all)")
	case r.GPUMemoryMiB > 0 && (gpuFields > 0 || r.Tasks > 1):
		add("gpu_memory_mib: the scheduler picks the GPUs and the tasks; give no gpus, mig, share or tasks with it")
	case len(r.GPUModels) > 16:
		add("gpu_models: %d models, at most 16", len(r.GPUModels))
	}
}

// validateBatch checks the fields that came from sbatch: the script,
// the array, the dependency, the output files, the umask, the signal.
func (r *JobRequest) validateBatch(add func(string, ...any)) {
	switch {
	case len(r.Script) > MaxScript:
		add("script: %d bytes, at most %d", len(r.Script), MaxScript)
	case r.Script != "" && !strings.HasPrefix(r.Script, "#!"):
		add("script: its first line must start with #! and the path of an interpreter (#!/bin/bash)")
	case strings.ContainsRune(r.Script, 0):
		add("script: holds a NUL")
	case r.Script != "" && r.Image != "":
		add("script with image: put the script in the image or the work directory and give it as the command")
	}
	if r.Array != "" {
		if _, err := slurmfmt.ParseArrayUpTo(r.Array, slurmfmt.CeilingArrayTasks); err != nil { // the server checks its own limit
			add("array %q: %v", truncate(r.Array, 40), err)
		}
	}
	if _, err := eligible.ParseDependency(r.Dependency); err != nil {
		add("dependency: %v", err)
	}
	for _, f := range []struct{ name, v string }{{"output", r.Output}, {"error", r.Error}} {
		if err := slurmfmt.CheckPattern(f.v); err != nil || strings.ContainsRune(f.v, 0) || len(f.v) > 1024 {
			add("%s %q: want a file name pattern of at most 1024 bytes, with %%j %%x %%A %%a %%u %%N %%n %%t %%%%", f.name, truncate(f.v, 60))
		}
	}
	if r.OpenMode != "" && r.OpenMode != "truncate" && r.OpenMode != "append" {
		add("open_mode %q: want truncate or append", truncate(r.OpenMode, 20))
	}
	if _, err := ParseUmask(r.Umask); err != nil {
		add("umask %q: %v", truncate(r.Umask, 10), err)
	}
	if r.SubmitDir != "" && (!filepath.IsAbs(r.SubmitDir) || filepath.Clean(r.SubmitDir) != r.SubmitDir || strings.ContainsRune(r.SubmitDir, 0)) {
		add("submit_dir %q: want a clean absolute path", truncate(r.SubmitDir, 60))
	}
	if r.Signal != "" {
		if _, err := slurmfmt.ParseSignal(r.Signal); err != nil {
			add("signal %q: %v", truncate(r.Signal, 20), err)
		}
	}
}

// ParseUmask reads an octal file mode creation mask (0022, 077); ""
// is none (nil).
func ParseUmask(s string) (*uint32, error) {
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o777 {
		return nil, errors.New("want an octal mask 0000..0777, such as 0022")
	}
	m := uint32(n)
	return &m, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// setZero lists the fields whose zero value the schema forbids although
// JobRequest cannot tell it from an absent field, and why.
var setZero = map[string]string{
	"share":   "want a fraction of one GPU, above 0 and below 1; leave share out for none",
	"tasks":   "want 1..64; leave tasks out for one task",
	"name":    "empty; leave name out for none",
	"queue":   "empty; leave queue out for the default",
	"mig":     "empty; leave mig out for none",
	"image":   "empty; leave image out to run without a container",
	"workdir": "empty; leave workdir out for the default",
	"script":  "empty; leave script out to run the command",
}

// CheckSetFields reports the fields of a request, as a JSON object or a
// YAML job file decodes into a map, that are set to a zero value the
// schema forbids: "share": 0, "tasks": 0, "name": "" and the like, which
// Validate cannot see because they decode like absent fields.
func CheckSetFields(fields map[string]any) error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		why, ok := setZero[k]
		if ok && isZero(fields[k]) {
			errs = append(errs, fmt.Errorf("%s %#v: %s", k, fields[k], why))
		}
	}
	return errors.Join(errs...)
}

func isZero(v any) bool {
	switch v := v.(type) {
	case float64:
		return v == 0
	case int:
		return v == 0
	case string:
		return v == ""
	}
	return false
}

package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/corral-sched/corral/internal/eligible"
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/slurmfmt"
	"github.com/corral-sched/corral/internal/store"
)

// Config is what a Server needs.
type Config struct {
	Store *store.Store
	GPUs  []GPU
	// TimeSlices is the shares per GPU when MIG is off (default
	// DefaultTimeSlices); 1 turns sharing off.
	TimeSlices int
	// GPUPrice is what one GPU costs an hour, in US dollars (0: no
	// price): what a tenant's dollar budget charges for a GPU-hour.
	GPUPrice float64
	// CPUMilli and MemoryMiB are what tasks may ask for in all; zero takes
	// the machine's CPUs and 2 TiB.
	CPUMilli  int64
	MemoryMiB int64
	// StateDir holds the tasks' logs and exit records.
	StateDir string
	// Interval is the longest wait between two scheduling cycles (default
	// 1s); submissions and completions start one at once.
	Interval time.Duration
	// Depth is the most placements one cycle tries, in queue order
	// (default DefaultDepth): a long queue costs a cycle no more than this.
	// Jobs of tenants at their quota cost nothing, so one tenant's backlog
	// never hides another's work.
	Depth int
	// ReclaimPatience is how long a job within its tenant's quota waits
	// for room before it stops the cohort peers' borrowed jobs: 0 is
	// sched.DefaultReclaimPatience, negative reclaims at once.
	ReclaimPatience time.Duration
	// Health, when set, reports GPU problems; it is polled every
	// HealthInterval (default 10s).
	Health         HealthFunc
	HealthInterval time.Duration
	Logger         *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// ContainerRuntime, when set, is a Docker-compatible CLI (docker,
	// podman) that runs the tasks of jobs that name an image.
	ContainerRuntime string
	// RunAs is whose Unix user the jobs run as (default RunAsServer:
	// the server's own); see RunAs.
	RunAs RunAs
	// Cgroups gives each task a cgroup of its own, under the server's
	// cgroup in each writable hierarchy: killed whole, with the job's
	// memory and CPU as limits and only its GPUs' device files
	// openable. Where no hierarchy is writable, tasks run without, and
	// Isolation says so.
	Cgroups bool
	// DevDir holds the GPUs' device files (default /dev).
	DevDir string
	// MaxGrace caps the grace period of every job (SIGTERM to SIGKILL
	// on a cancel, a preemption or the time limit), as Slurm's
	// KillWait: a tenant's MaxGrace overrides it for that tenant. 0 is
	// DefaultMaxGrace.
	MaxGrace time.Duration
	// DefMemPerGPUMiB and DefCPUPerGPUMilli are the memory and CPU a
	// task that declares none gets per GPU it uses (a share or MIG
	// slice its fraction, a CPU-only task one GPU's worth), as Slurm's
	// DefMemPerGPU and DefCpuPerGPU: its cgroup's limits, and what it is
	// charged when its tenant has a memory or CPU quota. 0 is the
	// machine's memory or CPUs divided by its GPUs.
	DefMemPerGPUMiB   int64
	DefCPUPerGPUMilli int64
	// PidsMax caps the processes and threads of each task (pids.max);
	// 0 is DefaultPidsMax, negative none.
	PidsMax int64
	// MaxArrayTasks is the most tasks one job array may have (Slurm's
	// MaxArraySize); 0 is slurmfmt.MaxArrayTasks, at most
	// slurmfmt.CeilingArrayTasks.
	MaxArrayTasks int
	// MaxOutputBytes caps each log (stdout, stderr) of each task: what
	// it writes beyond is dropped, the log ending with a marker. 0 is
	// DefaultMaxOutput, negative none.
	MaxOutputBytes int64
	// MinFreeBytes is the room the server keeps free on the filesystems
	// of its database and state directory: below it, submissions are
	// refused (507) until space is freed. 0 is DefaultMinFree, negative
	// none.
	MinFreeBytes int64
}

// DefaultDepth is the default of Config.Depth.
const DefaultDepth = 1000

// Server is the daemon: scheduler, task runner and API.
type Server struct {
	cfg   Config
	st    *store.Store
	log   *slog.Logger
	now   func() time.Time
	model *gpu.Model
	gpus  []GPU

	full *fleet.Fleet // every GPU, healthy or not: what work could ever use

	mu      sync.Mutex
	state   *gang.State
	phys    []int                       // gang GPU index -> physical GPU index
	waiting map[uint64]store.Job        // pending and preempted jobs
	runs    map[uint64]*run             // running jobs
	unsaved map[uint64]*unsavedEnd      // ended runs the store has not recorded yet (saveEnds)
	waits   map[uint64]lastWait         // what the last cycle said of each waiting job
	blocked map[uint64]eligible.Verdict // waiting jobs kept out of the cycle (held, dependencies, ...): judge
	mem     *sched.Memory               // the scheduler's memory of jobs, persisted in their records (memory.go)
	// learnedRenewed and learnedSeen are the renewal and the arrivals of
	// the learned mix the store last kept; learnedCounts says whether the
	// state's learned mix counts the running jobs (learned.go).
	learnedRenewed, learnedSeen int
	learnedCounts               bool
	ledger                      sched.Ledger // the tenants' quotas and fair share
	tenants                     map[string]store.Tenant
	// spent caches, by tenant, what its ended runs used in its budget's
	// current period; records counts the accounting records written, so
	// that a new one refreshes it.
	spent   map[string]spentCache
	records int
	bad     map[int]string // unhealthy GPUs and their problems
	iso     isolation      // how tasks are fenced; set by New
	host    string         // the machine's name, as jobs see it (SLURM_JOB_NODELIST)

	// startRecorded, when set (by tests), is called once a start is
	// persisted and before its tasks are launched.
	startRecorded func(store.Job)

	soleMu sync.Mutex // serializes submissions on a RunAsServerOneTenant server

	inMu     sync.Mutex
	incoming []uint64 // submitted, not yet admitted to waiting

	kick chan struct{}
	// capKick wakes the disk cap's worker for the tenants in overCap
	// (guarded by mu; diskcap.go).
	capKick chan struct{}
	overCap map[string]bool
	ended   chan ended
	metrics *metrics

	stopOnce sync.Once
	stopped  chan struct{}
	loopDone chan struct{}
}

// New opens a server on cfg.Store and re-adopts the tasks of jobs the
// store records as running. Call Run to start scheduling.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: no store")
	}
	if cfg.StateDir == "" {
		cfg.StateDir = filepath.Join(filepath.Dir(cfg.Store.Path()), "tasks")
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("server: state dir: %w", err)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Depth <= 0 {
		cfg.Depth = DefaultDepth
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxGrace <= 0 {
		cfg.MaxGrace = DefaultMaxGrace
	}
	if cfg.MaxArrayTasks <= 0 {
		cfg.MaxArrayTasks = slurmfmt.MaxArrayTasks
	}
	if cfg.MaxOutputBytes == 0 {
		cfg.MaxOutputBytes = DefaultMaxOutput
	}
	if cfg.MinFreeBytes == 0 {
		cfg.MinFreeBytes = DefaultMinFree
	}
	if cfg.PidsMax == 0 {
		cfg.PidsMax = DefaultPidsMax
	}
	if cfg.TimeSlices == 0 {
		cfg.TimeSlices = DefaultTimeSlices
	}
	f, model, err := buildFleet(cfg.GPUs, &cfg)
	if err != nil {
		return nil, fmt.Errorf("server: fleet: %w", err)
	}
	state, err := gang.New(cloneFleet(f))
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{
		full: f, cfg: cfg, st: cfg.Store, log: cfg.Logger, now: cfg.Now, model: model, gpus: cfg.GPUs,
		state: state, waiting: map[uint64]store.Job{}, runs: map[uint64]*run{}, unsaved: map[uint64]*unsavedEnd{},
		waits: map[uint64]lastWait{}, blocked: map[uint64]eligible.Verdict{}, host: hostName(), mem: sched.NewMemory(), tenants: map[string]store.Tenant{}, spent: map[string]spentCache{}, bad: map[int]string{},
		kick: make(chan struct{}, 1), ended: make(chan ended, 64),
		metrics: newMetrics(), stopped: make(chan struct{}), loopDone: make(chan struct{}), capKick: make(chan struct{}, 1),
	}
	s.phys = make([]int, len(cfg.GPUs))
	for i := range s.phys {
		s.phys[i] = cfg.GPUs[i].Index
	}
	if err := s.setupIsolation(); err != nil {
		return nil, err
	}
	if err := s.recover(); err != nil {
		return nil, fmt.Errorf("server: recover: %w", err)
	}
	if err := s.checkOneTenant(); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	for _, p := range s.iso.problems {
		s.log.Warn("isolation: " + p)
	}
	return s, nil
}

// Store is the server's store.
func (s *Server) Store() *store.Store { return s.st }

// Run schedules until ctx ends or Close is called.
func (s *Server) Run(ctx context.Context) {
	defer close(s.loopDone)
	if s.cfg.Health != nil {
		if s.cfg.HealthInterval <= 0 {
			s.cfg.HealthInterval = 10 * time.Second
		}
		s.checkHealth()
		go s.healthLoop(s.cfg.HealthInterval)
	}
	go s.diskCapLoop(ctx)
	s.mu.Lock()
	for t := range s.tenants { // caps lowered, or files kept, while no server ran
		s.fitDiskCapSoon(t)
	}
	s.mu.Unlock()
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	for {
		s.cycle()
		select {
		case <-ctx.Done():
			return
		case <-s.stopped:
			s.mu.Lock()
			s.persistLearned(true)
			s.mu.Unlock()
			return
		case e := <-s.ended:
			s.finish(e)
			s.drainEnded()
		case <-s.kick:
		case <-tick.C:
		}
	}
}

// drainEnded finishes every completion already waiting, so that one
// cycle sees them all.
func (s *Server) drainEnded() {
	for {
		select {
		case e := <-s.ended:
			s.finish(e)
		default:
			return
		}
	}
}

// Close stops scheduling. Running tasks keep running: a later server on
// the same store adopts them.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stopped) })
}

// Wait blocks until Run has returned.
func (s *Server) Wait() { <-s.loopDone }

// poke asks the loop for a cycle soon.
func (s *Server) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// cloneFleet copies the one-node fleet, so that a core state may change
// its node's health without touching the original.
func cloneFleet(f *fleet.Fleet) *fleet.Fleet {
	c := *f
	c.Nodes = append([]fleet.Node(nil), f.Nodes...)
	return &c
}

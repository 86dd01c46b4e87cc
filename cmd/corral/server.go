package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/buildinfo"
	"github.com/corral-sched/corral/internal/discover"
	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/server"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
	"github.com/corral-sched/corral/internal/store"
)

const serverUsage = `Usage: corral server [flags]

Runs the corral daemon for one multi-GPU machine: it keeps a queue of jobs
in an embedded database, starts each job's tasks as real processes on the
GPUs the scheduler picks (CUDA_VISIBLE_DEVICES), stops lower-priority work
for higher-priority work, and serves the API used by corral submit, queue,
gpus, cancel, logs, acct and explain, Prometheus metrics at /metrics and a
dashboard at /.

Try it without GPUs:
  corral server --dev
prints an admin token and an export line to paste into another shell. Its
database lives in ~/.local/state/corral/dev (/var/lib/corral/dev for root)
and outlasts a restart; --fresh starts with an empty one.

In production:
  corral server --db /var/lib/corral/corral.db --listen 127.0.0.1:7070
finds the GPUs through the NVIDIA driver (or takes --gpus 8xH100-80GB to
declare them). On the first start it creates the admin tenant and prints
its token once. Jobs keep running when the server stops; the next server on
the same database adopts them. Under systemd, use deploy/corral-server.service
(KillMode=process, Delegate=yes).

Run as root, the server runs each job as its tenant's Unix user (corral
server tenant set NAME --unix-user USER; a tenant without one cannot
submit), with a clean environment, in a cgroup of its own per task: killed
whole, its memory and CPU requests as limits, only its GPUs' device files
openable. Not run as root, it runs every job as itself, and takes one
tenant's jobs at a time unless --single-user says that sharing its user is
fine. corral gpus tells what isolation holds.

Tenants (with the admin token): 'corral server tenant -h'.

Flags:
`

type serverFlags struct {
	dev                    bool
	db, gpus, listen       string
	stateDir, admin        string
	tlsCert, tlsKey        string
	mig                    bool
	slices                 int
	gpuPrice               float64
	newAdminToken, verbose bool
	containerRuntime       string
	singleUser, cgroups    bool
	fresh                  bool
	reclaimPatience        time.Duration
	limits                 serverLimits
}

func runServer(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "tenant" {
		return runTenant(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f serverFlags
	fs.BoolVar(&f.dev, "dev", false, "development mode: fake GPUs, a database kept under your state directory (see --fresh), an admin token printed")
	fs.BoolVar(&f.fresh, "fresh", false, "with --dev: start with an empty database, deleting the one (and the task files) an earlier --dev server left")
	fs.StringVar(&f.db, "db", "", "database `file` (required without --dev)")
	fs.StringVar(&f.gpus, "gpus", "", "declare fake GPUs instead of asking the driver, such as 8xH100-80GB (--dev default)")
	fs.BoolVar(&f.mig, "mig", false, "treat the declared GPUs as being in MIG mode (jobs ask --mig PROFILE)")
	fs.IntVar(&f.slices, "slices", server.DefaultTimeSlices, "time-sliced shares per GPU when MIG is off (1: no sharing)")
	fs.Float64Var(&f.gpuPrice, "gpu-price", 0, "what one GPU costs an hour, in `USD`: what tenants' dollar budgets ($20000/month) charge for a GPU-hour (0: no price, budgets in GPU-hours only)")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:7070", "`address` to serve the API on")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate `file` (with --tls-key: serve HTTPS)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "TLS key `file`")
	fs.StringVar(&f.stateDir, "state-dir", "", "`directory` for task logs and exit records (default: tasks/ next to the database)")
	fs.StringVar(&f.admin, "admin", "admin", "name of the admin tenant")
	fs.BoolVar(&f.newAdminToken, "new-admin-token", false, "print a new admin token at start")
	fs.BoolVar(&f.verbose, "v", false, "log every request")
	fs.StringVar(&f.containerRuntime, "container-runtime", "", "Docker-compatible `CLI` (docker, podman) that runs jobs submitted with --image")
	fs.BoolVar(&f.singleUser, "single-user", false, "not root: run every tenant's jobs as the server's own user (without it, one tenant's jobs at a time); --dev implies it")
	fs.DurationVar(&f.reclaimPatience, "reclaim-patience", sched.DefaultReclaimPatience, reclaimPatienceHelp)
	fs.BoolVar(&f.cgroups, "cgroups", true, "give each task a cgroup: killed whole, memory and CPU limits, only its GPUs' devices (false: none)")
	f.limits.register(fs)
	if err := parseFlags(fs, serverUsage, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return unexpected(fs)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, f, stdout, stderr)
}

func serve(ctx context.Context, f serverFlags, stdout, stderr io.Writer) error {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return errors.New("give both --tls-cert and --tls-key, or neither")
	}
	if f.dev && f.gpus == "" {
		f.gpus = "8xH100-80GB"
	}
	gpus, err := machineGPUs(f.gpus, f.mig)
	if err != nil {
		return err
	}
	if f.fresh && (!f.dev || f.db != "") {
		return errors.New("--fresh starts the --dev database afresh: give it with --dev and without --db")
	}
	if f.dev && f.db == "" {
		if f.db, err = devDatabase(f.fresh); err != nil {
			return err
		}
	}
	if f.db == "" {
		return errors.New("no database: give --db FILE, or try --dev")
	}
	runAs, err := serverRunAs(f)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	logger.Info("corral server starting", buildinfo.Get().LogAttrs()...)
	st, err := store.Open(f.db)
	if err != nil {
		return err
	}
	defer st.Close()
	if !(f.gpuPrice >= 0 && f.gpuPrice <= 1e4) {
		return usageErrorf("--gpu-price %g: want US dollars per GPU-hour, from 0 to 10000", f.gpuPrice)
	}
	cfg := server.Config{Store: st, GPUs: gpus, TimeSlices: f.slices, GPUPrice: f.gpuPrice, StateDir: f.stateDir, Logger: logger,
		ContainerRuntime: f.containerRuntime, RunAs: runAs, Cgroups: f.cgroups, ReclaimPatience: patienceSetting(f.reclaimPatience)}
	if err := f.limits.apply(&cfg); err != nil {
		return err
	}
	if f.gpus == "" {
		cfg.Health = gpuHealth
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	scheme := "http"
	if f.tlsCert != "" {
		scheme = "https"
	}
	url := serverURL(scheme, l.Addr().String())
	if err := announce(srv, st, f, url, stdout); err != nil {
		l.Close()
		return err
	}
	logger.Info("corral server", "url", url, "listen", l.Addr().String(), "db", f.db, "gpus", len(gpus), "model", gpus[0].Model)
	if host, _, _ := net.SplitHostPort(l.Addr().String()); scheme == "http" && !net.ParseIP(host).IsLoopback() {
		logger.Warn("serving plain HTTP beyond loopback: tokens cross the network in the clear; give --tls-cert and --tls-key")
	}
	go srv.Run(ctx)
	hs := server.HTTPServer(srv.Handler())
	errc := make(chan error, 1)
	go func() {
		if f.tlsCert != "" {
			errc <- hs.ServeTLS(l, f.tlsCert, f.tlsKey)
		} else {
			errc <- hs.Serve(l)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down; running jobs keep running and are adopted at the next start")
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(shut)
	srv.Close()
	srv.Wait()
	return nil
}

// serverRunAs is whose user the jobs run as: their tenants' when the
// server runs as root; else the server's, for one tenant at a time
// unless --single-user (or --dev) says that all may share it.
func serverRunAs(f serverFlags) (server.RunAs, error) {
	switch {
	case os.Geteuid() == 0 && f.singleUser:
		return 0, errors.New("--single-user: as root, jobs run as their tenants' Unix users; it would run them all as root")
	case os.Geteuid() == 0:
		return server.RunAsTenant, nil
	case f.singleUser || f.dev:
		return server.RunAsServer, nil
	}
	return server.RunAsServerOneTenant, nil
}

// serverURL is a URL that reaches a server listening on addr: a wildcard
// address (0.0.0.0, ::, which Go reports as [::]) is not one, so it
// becomes the loopback address over HTTP, and the host name over HTTPS,
// whose certificate names the host.
func serverURL(scheme, addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return scheme + "://" + addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if name, err := os.Hostname(); err == nil && name != "" && scheme == "https" {
			host = name
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// announce prints how to reach the server: in dev mode (or when asked, or
// on the first start) an admin token and a line to paste into a shell.
func announce(srv *server.Server, st *store.Store, f serverFlags, url string, stdout io.Writer) error {
	_, err := st.Tenant(f.admin)
	first := errors.Is(err, store.ErrNotFound)
	if !f.dev && !f.newAdminToken && !first {
		fmt.Fprintf(stdout, "corral server listening on %s\n", url)
		printIsolation(stdout, srv.Isolation())
		return nil
	}
	token, err := srv.Bootstrap(f.admin)
	if err != nil {
		return err
	}
	if err := devAdminUser(st, f); err != nil {
		return err
	}
	defer printIsolation(stdout, srv.Isolation())
	fmt.Fprintf(stdout, "corral server listening on %s (database %s)\n", url, f.db)
	fmt.Fprintf(stdout, "Admin token for tenant %q (shown once):\n\n", f.admin)
	fmt.Fprintf(stdout, "export CORRAL_TOKEN=%s CORRAL_SERVER=%s\n\n", token, url)
	fmt.Fprintf(stdout, "Dashboard: %s/#token=%s\n", url, token)
	fmt.Fprintln(stdout, "Then: "+nextSteps(f))
	return nil
}

// nextSteps is what to try first: a job that shows its GPU, with
// nvidia-smi only where the GPUs are real.
func nextSteps(f serverFlags) string {
	job := "nvidia-smi -L"
	if f.gpus != "" { // declared: no driver, nothing for nvidia-smi to list
		job = `sh -c 'echo "my GPUs: $CUDA_VISIBLE_DEVICES"'`
	}
	return "corral submit --gpus 1 -- " + job + "; corral queue; corral gpus"
}

// devDatabase is the --dev database, kept across restarts in the user's
// state directory ($XDG_STATE_HOME/corral/dev, else
// ~/.local/state/corral/dev, or /var/lib/corral/dev for root), with its
// task files next to it; fresh deletes what an earlier server left.
func devDatabase(fresh bool) (string, error) {
	dir, err := devDir()
	if err != nil {
		return "", err
	}
	if fresh {
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("--fresh: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("dev state directory: %w", err)
	}
	if err := os.Chmod(dir, 0o711); err != nil { // jobs run as other users pass through it
		return "", fmt.Errorf("dev state directory: %w", err)
	}
	return filepath.Join(dir, "corral.db"), nil
}

func devDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "corral", "dev"), nil
	}
	if os.Geteuid() == 0 { // root's home is closed to the users its jobs run as
		return "/var/lib/corral/dev", nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory for --dev (give --db): %w", err)
	}
	return filepath.Join(home, ".local", "state", "corral", "dev"), nil
}

// devAdminUser gives the admin tenant of a --dev server run by root a
// Unix user to run its jobs as, nobody, unless it has one: a root server
// never runs jobs as root.
func devAdminUser(st *store.Store, f serverFlags) error {
	if !f.dev || os.Geteuid() != 0 {
		return nil
	}
	_, err := st.UpdateTenant(f.admin, func(t *store.Tenant) error {
		if t.UnixUser == "" && t.UID == 0 {
			t.UnixUser = "nobody"
		}
		return nil
	})
	return err
}

// printIsolation says whose user the jobs run as and what isolation does
// not hold.
func printIsolation(w io.Writer, iso api.Isolation) {
	if iso.RunAs == "tenant" {
		fmt.Fprintln(w, "Jobs run as their tenants' Unix users (corral server tenant set NAME --unix-user USER).")
	} else {
		fmt.Fprintf(w, "Jobs run as %s, the server's user.\n", iso.User)
	}
	fmt.Fprintf(w, "Tasks' cgroups: %s.\n", iso.Cgroups)
	for _, p := range iso.Problems {
		fmt.Fprintf(w, "warning: %s\n", p)
	}
}

// machineGPUs declares fake GPUs when asked, else discovers the real ones.
func machineGPUs(declared string, mig bool) ([]server.GPU, error) {
	var devs []discover.Device
	var err error
	if declared != "" {
		devs, err = discover.ParseDeclared(declared)
	} else {
		devs, err = discover.Discover()
		if errors.Is(err, discover.ErrNoDriver) {
			return nil, errors.New("no NVIDIA driver found: declare GPUs with --gpus 8xH100-80GB, or try --dev")
		}
	}
	if err != nil {
		return nil, err
	}
	gpus := make([]server.GPU, 0, len(devs))
	var unknown []string
	for _, d := range devs {
		if d.Model == "" {
			unknown = append(unknown, d.Product)
			continue
		}
		g := server.GPU{Index: d.Index, UUID: d.UUID, Model: d.Model, MemoryMiB: d.MemoryMiB, MIG: d.MIG || (mig && d.Fake)}
		for _, in := range d.MIGInstances {
			g.MIGInstances = append(g.MIGInstances, server.MIGInstance{UUID: in.UUID, Profile: in.Profile})
		}
		gpus = append(gpus, g)
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("GPUs not in corral's catalog: %s", strings.Join(unknown, ", "))
	}
	if len(gpus) == 0 {
		return nil, errors.New("no GPUs found")
	}
	return gpus, nil
}

// gpuHealth asks the driver for the problems of each GPU.
func gpuHealth() (map[int][]string, error) {
	devs, err := discover.Discover()
	if err != nil {
		return nil, err
	}
	out := map[int][]string{}
	for _, d := range devs {
		if p := d.Health.Problems(); len(p) > 0 {
			out[d.Index] = p
		}
	}
	return out, nil
}

const tenantUsage = `Usage: corral server tenant list
       corral server tenant create [--quota GPUS] [--cohort NAME] [--admin] [--unix-user USER] [--uid N] [--gid N] NAME
       corral server tenant set NAME [--quota GPUS] [--cohort NAME] [--unix-user USER] [--uid N] [--gid N]
       corral server tenant token NAME [--keep]
       corral server tenant tokens NAME
       corral server tenant delete NAME [--drain]
       corral server tenant audit

Manages the tenants of a running server (needs an admin token). create adds
a tenant and prints its first token; set changes the flags it is given;
token prints a new one and revokes the tenant's others at once (--keep
keeps them; tokens are stored hashed and shown once); tokens lists them
with when each was made and last used; delete removes a tenant and its
tokens, refused while its jobs wait or run unless --drain, which cancels
them; audit prints the log of admin actions. create and set refuse a
tenant that would share a Unix user with another, or GPU quotas that sum
above the machine's GPUs, unless --force. --quota
caps the GPUs the tenant's running jobs hold (fractions count: 0.5 is half
a GPU; 0 means no cap).

Tenants with a quota and one --cohort lend each other the GPUs their quotas
leave unused: a team at its cap runs on what its peers do not use, and a
peer whose job waits within its own quota gets it back by stopping borrowed
jobs (those that lose the least work first, each with its grace to
checkpoint) once the job has waited the server's --reclaim-patience (an
hour by default; 0: at the next cycle). set with an empty --cohort leaves
the cohort.

A server run by root runs each job as its tenant's Unix user: --unix-user
names the account (or --uid gives it; a uid without an account needs
--gid), --gid overrides its primary group. Root (--uid 0) is refused.

Limits no tenant can lift: --max-grace caps the grace of its jobs (the
server's --max-grace otherwise), --def-mem-per-gpu and --def-cpus-per-gpu
are what a task that asks for no memory or CPU gets per GPU (charged to
its quotas), and --max-priority is the highest --priority it may ask for
(0 by default); priority orders its own jobs and never stops another
tenant's. --budget GPUH/PERIOD caps the GPU-hours its jobs use per period
(1000/720h, or 1000/month for the calendar month in UTC): a job whose GPUs
times its time limit would overrun what is left waits, saying so in
corral explain with the budget's numbers and when it runs out at the
period's rate; a job without a time limit waits only once the budget is
spent; nothing running is stopped. set with an
empty --unix-user or a zero --uid or --gid unsets it.
` + clientHelp + `
Flags:
`

func runTenant(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("server tenant", stderr)
	quota := fs.Float64("quota", 0, "GPU quota of the tenant (0: none)")
	quotaCPUs := fs.Float64("quota-cpus", 0, "CPU cores the tenant's running jobs may ask for in all (0: no cap)")
	quotaMem := fs.String("quota-mem", "", "memory the tenant's running jobs may ask for in all, as --mem takes it (16G; empty or 0: no cap)")
	cohort := fs.String("cohort", "", "the `cohort` of tenants that lend each other unused GPU quota (needs --quota)")
	admin := fs.Bool("admin", false, "make the new tenant an admin")
	unixUser := fs.String("unix-user", "", "the Unix `user` the tenant's jobs run as (a server run by root)")
	uid := fs.Uint("uid", 0, "the Unix uid the tenant's jobs run as, instead of --unix-user")
	gid := fs.Uint("gid", 0, "the Unix gid the tenant's jobs run as (default: the user's group)")
	var lim tenantLimits
	lim.register(fs)
	var life tenantLife
	life.register(fs)
	// Flags may come before and after the verb and the name; -h needs no
	// token.
	pos, err := parseInterleaved(fs, tenantUsage, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &usageError{cmd: "server tenant", err: errors.New("give " + tenantVerbs)}
	}
	verb, rest := pos[0], pos[1:]
	if !slices.Contains(strings.Fields(strings.NewReplacer(",", "", " or", "").Replace(tenantVerbs)), verb) {
		return &usageError{cmd: "server tenant", err: fmt.Errorf("%q: give %s", verb, tenantVerbs)}
	}
	if err := refuseRootIDs(fs, verb); err != nil {
		return err
	}
	if *uid > math.MaxUint32 || *gid > math.MaxUint32 {
		return fmt.Errorf("--uid %d, --gid %d: Unix ids are below 2^32", *uid, *gid)
	}
	memMiB, err := mibFlag("quota-mem", *quotaMem)
	if err != nil {
		return err
	}
	if _, err := lim.memMiB(); err != nil {
		return err
	}
	if _, err := lim.diskMiB(); err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(30 * time.Second)
	defer cancel()
	caps := tenantCaps{gpus: *quota, cpus: *quotaCPUs, memMiB: memMiB}
	switch {
	case verb == "list" && len(rest) == 0:
		ts, err := c.Tenants(ctx)
		if err != nil {
			return err
		}
		if life.json {
			return printJSON(stdout, api.TenantList{Tenants: ts})
		}
		return printTenants(stdout, ts)
	case verb == "create" && len(rest) == 1:
		req := api.TenantRequest{Name: rest[0], QuotaGPUs: caps.gpus, QuotaCPUs: caps.cpus, QuotaMemoryMiB: caps.memMiB,
			Cohort: *cohort, Admin: *admin, UnixUser: *unixUser, UID: uint32(*uid), GID: uint32(*gid)}
		if err := lim.create(&req); err != nil {
			return err
		}
		if _, err := c.CreateTenantForce(ctx, req, life.force); err != nil {
			return err
		}
		return printToken(ctx, c, rest[0], life.json, stdout)
	case verb == "set" && len(rest) == 1:
		u, err := tenantUpdate(fs, caps, *cohort, *unixUser, *uid, *gid, lim)
		if err != nil {
			return err
		}
		t, err := c.UpdateTenantForce(ctx, rest[0], u, life.force)
		if err != nil {
			return err
		}
		if life.json {
			return printJSON(stdout, t)
		}
		return printTenants(stdout, []api.Tenant{t})
	case verb == "token" && len(rest) == 1:
		return life.printToken(ctx, c, rest[0], stdout)
	case len(rest) <= 1:
		if done, err := life.run(ctx, c, verb, rest, stdout); done {
			return err
		}
	}
	return fmt.Errorf("corral server tenant %s %s: see corral server tenant -h", verb, strings.Join(rest, " "))
}

// tenantCaps are a tenant's quotas as the flags give them.
type tenantCaps struct {
	gpus, cpus float64
	memMiB     int64
}

// tenantUpdate is what set changes: the flags given, and only those.
func tenantUpdate(fs *flag.FlagSet, caps tenantCaps, cohort, unixUser string, uid, gid uint, lim tenantLimits) (api.TenantUpdate, error) {
	var u api.TenantUpdate
	fs.Visit(func(f *flag.Flag) {
		lim.update(f.Name, &u)
		switch f.Name {
		case "quota":
			u.QuotaGPUs = &caps.gpus
		case "quota-cpus":
			u.QuotaCPUs = &caps.cpus
		case "quota-mem":
			u.QuotaMemoryMiB = &caps.memMiB
		case "cohort":
			u.Cohort = &cohort
		case "unix-user":
			u.UnixUser = &unixUser
		case "uid":
			id := uint32(uid)
			u.UID = &id
		case "gid":
			id := uint32(gid)
			u.GID = &id
		}
	})
	if u == (api.TenantUpdate{}) {
		return u, errors.New("set: give --quota, --quota-cpus, --quota-mem, --cohort, --unix-user, --uid, --gid or " + lim.names())
	}
	return u, nil
}

func printTenants(stdout io.Writer, ts []api.Tenant) error {
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tQUOTA\tBUDGET\tCOHORT\tDISK\tADMIN\tUNIX USER\tCREATED")
	for _, t := range ts {
		q, budget, cohort, disk := tenantQuota(t), cmp.Or(t.Budget, "-"), cmp.Or(t.Cohort, "-"), "-"
		if t.DiskMiB > 0 {
			disk = mibString(t.DiskMiB)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\t%s\n", t.Name, q, budget, cohort, disk, t.Admin, unixAccount(t), t.Created.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

// mibString writes a size in MiB as --mem takes it: 10G, 512M.
func mibString(m int64) string {
	if m >= 1024 && m%1024 == 0 {
		return strconv.FormatInt(m/1024, 10) + "G"
	}
	return strconv.FormatInt(m, 10) + "M"
}

// unixAccount shows a tenant's Unix account: "alice", "uid 1001",
// "alice gid 100", or "-".
func unixAccount(t api.Tenant) string {
	var parts []string
	if t.UnixUser != "" {
		parts = append(parts, t.UnixUser)
	}
	if t.UID != 0 {
		parts = append(parts, fmt.Sprintf("uid %d", t.UID))
	}
	if t.GID != 0 {
		parts = append(parts, fmt.Sprintf("gid %d", t.GID))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func printToken(ctx context.Context, c *client.Client, tenant string, asJSON bool, stdout io.Writer) error {
	tok, err := c.IssueToken(ctx, tenant)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(stdout, tok)
	}
	fmt.Fprintf(stdout, "Token for tenant %q (shown once):\n\nexport CORRAL_TOKEN=%s\n", tok.Tenant, tok.Token)
	return nil
}

// tenantQuota shows a tenant's caps: "4 GPUs, 16 CPUs, 64 GiB", or "-".
func tenantQuota(t api.Tenant) string {
	var caps []string
	if t.QuotaGPUs > 0 {
		caps = append(caps, fmt.Sprintf("%g GPUs", t.QuotaGPUs))
	}
	if t.QuotaCPUs > 0 {
		caps = append(caps, fmt.Sprintf("%g CPUs", t.QuotaCPUs))
	}
	if t.QuotaMemoryMiB > 0 {
		caps = append(caps, fmt.Sprintf("%g GiB", float64(t.QuotaMemoryMiB)/1024))
	}
	if len(caps) == 0 {
		return "-"
	}
	return strings.Join(caps, ", ")
}

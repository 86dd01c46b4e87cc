package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/corral-sched/corral/internal/sched"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

func (s *Server) handleTenants(w http.ResponseWriter, _ *http.Request, _ store.Tenant) {
	ts, err := s.st.Tenants()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := api.TenantList{Tenants: make([]api.Tenant, 0, len(ts))}
	for _, t := range ts {
		out.Tenants = append(out.Tenants, tenantView(t))
	}
	writeJSON(w, http.StatusOK, out)
}

func tenantView(t store.Tenant) api.Tenant {
	v := api.Tenant{Name: t.Name, QuotaGPUs: float64(t.QuotaMilli) / 1000, QuotaCPUs: float64(t.QuotaCPUMilli) / 1000,
		QuotaMemoryMiB: t.QuotaMemoryMiB, Cohort: t.Cohort, Admin: t.Admin, Created: t.Created, UnixUser: t.UnixUser, UID: t.UID, GID: t.GID}
	if t.MaxGrace > 0 {
		v.MaxGrace = t.MaxGrace.String()
	}
	v.DefMemPerGPUMiB, v.DefCPUsPerGPU = t.DefMemPerGPUMiB, float64(t.DefCPUPerGPUMilli)/1000
	v.MaxPriority, v.Budget, v.DiskMiB = t.MaxPriority, t.Budget, t.DiskMiB
	return v
}

// parseMaxGrace reads a tenant's grace cap: "" or "0s" for the server's.
func parseMaxGrace(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("max_grace %q: want a duration such as 30s, or 0s for the server's cap", s)
	}
	return d, nil
}

// checkQuota says what is wrong with a GPU quota, if anything.
func checkQuota(q float64) error {
	if q < 0 || q > 1e6 {
		return fmt.Errorf("quota_gpus %v: want 0 (no cap) or more", q)
	}
	return nil
}

// checkResourceQuotas says what is wrong with CPU and memory quotas.
func checkResourceQuotas(cpus float64, memMiB int64) error {
	switch {
	case cpus < 0 || cpus > 1e7:
		return fmt.Errorf("quota_cpus %v: want 0 (no cap) or more", cpus)
	case memMiB < 0:
		return fmt.Errorf("quota_memory_mib %d: want 0 (no cap) or more", memMiB)
	}
	return nil
}

// checkDefaults says what is wrong with a tenant's defaults per GPU.
func checkDefaults(cpus float64, memMiB int64) error {
	switch {
	case cpus < 0 || cpus > 1e7:
		return fmt.Errorf("def_cpus_per_gpu %v: want 0 (the server's) or more", cpus)
	case memMiB < 0:
		return fmt.Errorf("def_mem_per_gpu_mib %d: want 0 (the server's) or more", memMiB)
	}
	return nil
}

// checkCohort says what is wrong with a tenant's cohort: its name, or a
// cohort without a GPU quota to lend (an uncapped tenant would lend its
// peers the whole machine and take it back from them).
func checkCohort(t store.Tenant) error {
	switch {
	case t.Cohort == "":
		return nil
	case !api.ValidName(t.Cohort):
		return fmt.Errorf("cohort %q: use letters, digits, '.', '_' and '-'", t.Cohort)
	case t.QuotaMilli == 0:
		return fmt.Errorf("tenant %s: cohort %s needs a GPU quota (quota_gpus) to lend and borrow against", t.Name, t.Cohort)
	}
	return nil
}

// checkUnixUser says what is wrong with a tenant's Unix account, if
// anything: one that is set must resolve, and not to root.
func checkUnixUser(t store.Tenant) error {
	if t.UnixUser == "" && t.UID == 0 {
		if t.GID != 0 {
			return fmt.Errorf("tenant %s: gid %d without a unix_user or uid", t.Name, t.GID)
		}
		return nil
	}
	_, err := tenantUser(t)
	return err
}

func (s *Server) handleCreateTenant(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	var req api.TenantRequest
	if code, err := decode(r, &req); err != nil {
		writeError(w, code, err.Error())
		return
	}
	if !api.ValidName(req.Name) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("name %q: use letters, digits, '.', '_' and '-'", req.Name))
		return
	}
	if err := errors.Join(checkQuota(req.QuotaGPUs), checkResourceQuotas(req.QuotaCPUs, req.QuotaMemoryMiB),
		checkDefaults(req.DefCPUsPerGPU, req.DefMemPerGPUMiB), s.checkBudget(req.Budget), checkDisk(req.DiskMiB)); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	grace, err := parseMaxGrace(req.MaxGrace)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	t := store.Tenant{Name: req.Name, QuotaMilli: int(req.QuotaGPUs * 1000), QuotaCPUMilli: int64(req.QuotaCPUs * 1000),
		QuotaMemoryMiB: req.QuotaMemoryMiB, Cohort: req.Cohort, Admin: req.Admin, Created: s.now().UTC(), UnixUser: req.UnixUser, UID: req.UID, GID: req.GID,
		MaxGrace: grace, DefMemPerGPUMiB: req.DefMemPerGPUMiB, DefCPUPerGPUMilli: int64(req.DefCPUsPerGPU * 1000),
		MaxPriority: req.MaxPriority, Budget: req.Budget, DiskMiB: req.DiskMiB}
	if err := errors.Join(checkCohort(t), checkUnixUser(t)); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.refuseConflicts(w, r, t) {
		return
	}
	if err := s.st.CreateTenant(t); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, store.ErrExists) {
			code = http.StatusConflict
		}
		writeError(w, code, err.Error())
		return
	}
	s.audit(who, "tenant create", t.Name, tenantSummary(t))
	writeJSON(w, http.StatusCreated, tenantView(t))
}

// tenantSummary is a tenant's settings in one line, for the audit log.
func tenantSummary(t store.Tenant) string {
	return fmt.Sprintf("quota_gpus=%s quota_cpus=%s quota_memory_mib=%d cohort=%q admin=%v unix_user=%q uid=%d gid=%d max_grace=%v max_priority=%d budget=%q disk_mib=%d",
		gpuString(t.QuotaMilli), gpuString(int(t.QuotaCPUMilli)), t.QuotaMemoryMiB, t.Cohort, t.Admin, t.UnixUser, t.UID, t.GID, t.MaxGrace, t.MaxPriority, t.Budget, t.DiskMiB)
}

// handleUpdateTenant changes the quota or the Unix account of a tenant.
func (s *Server) handleUpdateTenant(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	var req api.TenantUpdate
	if code, err := decode(r, &req); err != nil {
		writeError(w, code, err.Error())
		return
	}
	if err := s.checkUpdate(req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if next, err := s.st.Tenant(r.PathValue("name")); err == nil {
		applyTenantUpdate(&next, req)
		if !s.refuseConflicts(w, r, next) {
			return
		}
	}
	t, err := s.st.UpdateTenant(r.PathValue("name"), func(t *store.Tenant) error {
		applyTenantUpdate(t, req)
		if err := errors.Join(checkCohort(*t), checkUnixUser(*t)); err != nil {
			return &httpError{http.StatusBadRequest, err}
		}
		return nil
	})
	if err != nil {
		code := errorCode(err, http.StatusInternalServerError)
		if errors.Is(err, store.ErrNotFound) {
			code = http.StatusNotFound
		}
		writeError(w, code, err.Error())
		return
	}
	s.mu.Lock()
	s.tenants[t.Name] = t // its caps hold from now on, for the jobs that run too
	s.fitDiskCapSoon(t.Name)
	s.mu.Unlock()
	s.audit(who, "tenant set", t.Name, tenantSummary(t))
	writeJSON(w, http.StatusOK, tenantView(t))
}

// checkUpdate says what is wrong with the quotas an update sets.
func (s *Server) checkUpdate(u api.TenantUpdate) error {
	var errs []error
	if u.QuotaGPUs != nil {
		errs = append(errs, checkQuota(*u.QuotaGPUs))
	}
	if u.QuotaCPUs != nil {
		errs = append(errs, checkResourceQuotas(*u.QuotaCPUs, 0))
	}
	if u.QuotaMemoryMiB != nil {
		errs = append(errs, checkResourceQuotas(0, *u.QuotaMemoryMiB))
	}
	if u.MaxGrace != nil {
		_, err := parseMaxGrace(*u.MaxGrace)
		errs = append(errs, err)
	}
	if u.DefCPUsPerGPU != nil {
		errs = append(errs, checkDefaults(*u.DefCPUsPerGPU, 0))
	}
	if u.DefMemPerGPUMiB != nil {
		errs = append(errs, checkDefaults(0, *u.DefMemPerGPUMiB))
	}
	if u.Budget != nil {
		errs = append(errs, s.checkBudget(*u.Budget))
	}
	if u.DiskMiB != nil {
		errs = append(errs, checkDisk(*u.DiskMiB))
	}
	return errors.Join(errs...)
}

func applyTenantUpdate(t *store.Tenant, u api.TenantUpdate) {
	if u.QuotaGPUs != nil {
		t.QuotaMilli = int(*u.QuotaGPUs * 1000)
	}
	if u.QuotaCPUs != nil {
		t.QuotaCPUMilli = int64(*u.QuotaCPUs * 1000)
	}
	if u.QuotaMemoryMiB != nil {
		t.QuotaMemoryMiB = *u.QuotaMemoryMiB
	}
	if u.Cohort != nil {
		t.Cohort = *u.Cohort
	}
	if u.UnixUser != nil {
		t.UnixUser = *u.UnixUser
	}
	if u.UID != nil {
		t.UID = *u.UID
	}
	if u.GID != nil {
		t.GID = *u.GID
	}
	if u.MaxGrace != nil {
		t.MaxGrace, _ = parseMaxGrace(*u.MaxGrace) // checked by checkUpdate
	}
	if u.DefCPUsPerGPU != nil {
		t.DefCPUPerGPUMilli = int64(*u.DefCPUsPerGPU * 1000)
	}
	if u.DefMemPerGPUMiB != nil {
		t.DefMemPerGPUMiB = *u.DefMemPerGPUMiB
	}
	if u.MaxPriority != nil {
		t.MaxPriority = *u.MaxPriority
	}
	if u.Budget != nil {
		t.Budget = *u.Budget
	}
	if u.DiskMiB != nil {
		t.DiskMiB = *u.DiskMiB
	}
}

// checkDisk says what is wrong with a tenant's disk cap, if anything.
func checkDisk(mib int64) error {
	if mib < 0 {
		return fmt.Errorf("disk cap %d MiB: want 0 (none) or more", mib)
	}
	return nil
}

// checkBudget says what is wrong with a tenant's budget, if anything: a
// dollar budget needs the GPUs' price (corral server --gpu-price).
func (s *Server) checkBudget(spec string) error {
	if spec == "" {
		return nil
	}
	b, err := sched.ParseBudget(spec)
	if err == nil && b.USD && s.cfg.GPUPrice <= 0 {
		return fmt.Errorf("budget %q is in dollars, and this server's GPUs have no price: start it with --gpu-price USD (one GPU an hour), or give the budget in GPU-hours", spec)
	}
	return err
}

// handleIssueToken makes a new token for a tenant and revokes its others
// at once, unless keep=true.
func (s *Server) handleIssueToken(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	name := r.PathValue("name")
	if !api.ValidName(name) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("tenant name %q is not valid", name))
		return
	}
	keep := r.URL.Query().Get("keep") == "true"
	tok, err := s.st.IssueToken(name, s.now(), !keep)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, store.ErrNotFound) {
			code = http.StatusNotFound
		}
		writeError(w, code, err.Error())
		return
	}
	action := "token rotate"
	if keep {
		action = "token add"
	}
	s.audit(who, action, name, "")
	writeJSON(w, http.StatusCreated, api.Token{Tenant: name, Token: tok})
}

// Bootstrap makes sure an admin tenant exists and returns a new token for
// it: what `corral server --dev` prints.
func (s *Server) Bootstrap(admin string) (string, error) {
	err := s.st.CreateTenant(store.Tenant{Name: admin, Admin: true, Created: s.now().UTC()})
	if err != nil && !errors.Is(err, store.ErrExists) {
		return "", err
	}
	return s.st.IssueToken(admin, s.now(), false)
}

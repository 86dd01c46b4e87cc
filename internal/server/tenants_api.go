package server

import (
	"errors"
	"fmt"
	"net/http"

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
	return api.Tenant{Name: t.Name, QuotaGPUs: float64(t.QuotaMilli) / 1000, Admin: t.Admin, Created: t.Created}
}

func (s *Server) handleCreateTenant(w http.ResponseWriter, r *http.Request, _ store.Tenant) {
	var req api.TenantRequest
	if code, err := decode(r, &req); err != nil {
		writeError(w, code, err.Error())
		return
	}
	if !api.ValidName(req.Name) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("name %q: use letters, digits, '.', '_' and '-'", req.Name))
		return
	}
	if req.QuotaGPUs < 0 || req.QuotaGPUs > 1e6 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("quota_gpus %v: want 0 (no cap) or more", req.QuotaGPUs))
		return
	}
	t := store.Tenant{Name: req.Name, QuotaMilli: int(req.QuotaGPUs * 1000), Admin: req.Admin, Created: s.now().UTC()}
	if err := s.st.CreateTenant(t); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, store.ErrExists) {
			code = http.StatusConflict
		}
		writeError(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, tenantView(t))
}

func (s *Server) handleIssueToken(w http.ResponseWriter, r *http.Request, _ store.Tenant) {
	name := r.PathValue("name")
	if !api.ValidName(name) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("tenant name %q is not valid", name))
		return
	}
	tok, err := s.st.IssueToken(name)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, store.ErrNotFound) {
			code = http.StatusNotFound
		}
		writeError(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, api.Token{Tenant: name, Token: tok})
}

// Bootstrap makes sure an admin tenant exists and returns a new token for
// it: what `corral server --dev` prints.
func (s *Server) Bootstrap(admin string) (string, error) {
	err := s.st.CreateTenant(store.Tenant{Name: admin, Admin: true, Created: s.now().UTC()})
	if err != nil && !errors.Is(err, store.ErrExists) {
		return "", err
	}
	return s.st.IssueToken(admin)
}

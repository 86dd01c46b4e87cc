package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// audit records an admin action; a failure to write it is logged, not
// returned: the action itself is done.
func (s *Server) audit(actor store.Tenant, action, target, detail string) {
	e := store.AuditEntry{Time: s.now(), Actor: actor.Name, Action: action, Target: target, Detail: detail}
	if err := s.st.Audit(e); err != nil {
		s.log.Error("audit", "action", action, "target", target, "err", err)
	}
}

// conflicts says how t, created or changed, would share the box unsafely
// with the other tenants: a Unix user another tenant's jobs run as (each
// could signal and read the other's jobs), or GPU quotas that sum above
// the machine's GPUs (a tenant's quota then is not a promise). "" when
// none. A change that lowers the tenant's quota is never refused for it.
func (s *Server) conflicts(t store.Tenant) (string, error) {
	ts, err := s.st.Tenants()
	if err != nil {
		return "", err
	}
	var why []string
	total, before := t.QuotaMilli, 0
	uid, mapped := tenantUID(t)
	for _, o := range ts {
		if o.Name == t.Name {
			before = o.QuotaMilli
			continue
		}
		total += o.QuotaMilli
		if ou, ok := tenantUID(o); mapped && ok && ou == uid {
			why = append(why, fmt.Sprintf("tenant %s's jobs already run as uid %d: the two could read and signal each other's jobs", o.Name, uid))
		}
	}
	if most := len(s.gpus) * 1000; total > most && t.QuotaMilli > before { // lowering a quota is always fine
		why = append(why, fmt.Sprintf("the tenants' GPU quotas would sum to %s on a machine of %d GPUs: not every tenant could hold its quota at once", gpuString(total), len(s.gpus)))
	}
	return strings.Join(why, "; "), nil
}

// tenantUID is the uid a tenant's jobs run as, when it has a Unix user.
func tenantUID(t store.Tenant) (uint32, bool) {
	if t.UnixUser == "" && t.UID == 0 {
		return 0, false
	}
	u, err := tenantUser(t)
	if err != nil {
		return t.UID, t.UID != 0
	}
	return u.UID, true
}

// refuseConflicts answers 409 and returns false when t conflicts and the
// admin did not insist (force=true).
func (s *Server) refuseConflicts(w http.ResponseWriter, r *http.Request, t store.Tenant) bool {
	why, err := s.conflicts(t)
	switch {
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
		return false
	case why != "" && r.URL.Query().Get("force") != "true":
		writeError(w, http.StatusConflict, fmt.Sprintf("tenant %s: %s; insist with force=true (corral server tenant ... --force)", t.Name, why))
		return false
	}
	return true
}

func (s *Server) handleDeleteTenant(w http.ResponseWriter, r *http.Request, who store.Tenant) {
	name := r.PathValue("name")
	drain := r.URL.Query().Get("drain") == "true"
	active, err := s.st.List(store.Filter{Tenant: name, States: cancellable})
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if len(active) > 0 && !drain {
		writeError(w, http.StatusConflict, fmt.Sprintf("tenant %s has %d jobs waiting or running: cancel them, or delete it with drain=true (--drain), which cancels them", name, len(active)))
		return
	}
	// Its tokens go first, so that no job of it is submitted while the
	// drain cancels the others.
	if err := s.st.DeleteTenant(name); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, store.ErrNotFound) {
			code = http.StatusNotFound
		}
		writeError(w, code, err.Error())
		return
	}
	out := api.TenantDeleted{Tenant: name}
	if len(active) > 0 {
		res, err := s.CancelMany(selection{tenant: name, states: cancellable, admin: true, who: who.Name})
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		for _, j := range res.Jobs {
			out.Cancelled = append(out.Cancelled, j.ID)
		}
	}
	s.audit(who, "tenant delete", name, fmt.Sprintf("drain=%v, %d jobs cancelled", drain, len(out.Cancelled)))
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleTokens(w http.ResponseWriter, r *http.Request, _ store.Tenant) {
	name := r.PathValue("name")
	if _, err := s.st.Tenant(name); err != nil {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	toks, err := s.st.Tokens(name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := api.TokenList{Tenant: name, Tokens: make([]api.TokenInfo, 0, len(toks))}
	for _, t := range toks {
		v := api.TokenInfo{ID: t.ID}
		if !t.Created.IsZero() {
			v.Created = &t.Created
		}
		if !t.LastUsed.IsZero() {
			v.LastUsed = &t.LastUsed
		}
		out.Tokens = append(out.Tokens, v)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleAudit(w http.ResponseWriter, _ *http.Request, _ store.Tenant) {
	log, err := s.st.AuditLog()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := api.AuditLog{Entries: make([]api.AuditEntry, 0, len(log))}
	for _, e := range log {
		out.Entries = append(out.Entries, api.AuditEntry(e))
	}
	writeJSON(w, http.StatusOK, out)
}

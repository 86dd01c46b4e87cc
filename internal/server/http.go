package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/store"
)

// MaxBody is the largest request body the API reads.
const MaxBody = 1 << 20

// route is one API route: its pattern, whether it needs a token, whether
// it needs the admin role, and its handler.
type route struct {
	method, path string
	auth, admin  bool
	handle       func(w http.ResponseWriter, r *http.Request, who store.Tenant)
}

// routes lists every route the server serves; the OpenAPI document must
// list the same (openapi_test.go).
func (s *Server) routes() []route {
	return []route{
		{"GET", "/healthz", false, false, s.handleHealth},
		{"GET", "/v1/whoami", true, false, s.handleWhoami},
		{"POST", "/v1/jobs", true, false, s.handleSubmit},
		{"GET", "/v1/jobs", true, false, s.handleList},
		{"GET", "/v1/jobs/{id}", true, false, s.handleGet},
		{"POST", "/v1/jobs/cancel", true, false, s.handleCancelMany},
		{"POST", "/v1/jobs/{id}/cancel", true, false, s.handleCancel},
		{"GET", "/v1/jobs/{id}/logs", true, false, s.handleLogs},
		{"GET", "/v1/jobs/{id}/explain", true, false, s.handleExplain},
		{"POST", "/v1/jobs/{id}/hold", true, false, s.handleHold},
		{"POST", "/v1/jobs/{id}/release", true, false, s.handleRelease},
		{"POST", "/v1/jobs/{id}/requeue", true, false, s.handleRequeue},
		{"PATCH", "/v1/jobs/{id}", true, false, s.handleUpdate},
		{"GET", "/v1/gpus", true, false, s.handleGPUs},
		{"GET", "/v1/acct", true, false, s.handleAcct},
		{"GET", "/v1/tenants", true, true, s.handleTenants},
		{"POST", "/v1/tenants", true, true, s.handleCreateTenant},
		{"PATCH", "/v1/tenants/{name}", true, true, s.handleUpdateTenant},
		{"DELETE", "/v1/tenants/{name}", true, true, s.handleDeleteTenant},
		{"POST", "/v1/tenants/{name}/tokens", true, true, s.handleIssueToken},
		{"GET", "/v1/tenants/{name}/tokens", true, true, s.handleTokens},
		{"GET", "/v1/audit", true, true, s.handleAudit},
	}
}

// Timeouts of the HTTP server: a client has ReadHeaderTimeout to send its
// request's headers and ReadTimeout to send the whole request (at most
// MaxBody); an idle keep-alive connection is closed after IdleTimeout.
// There is no write timeout: logs -f streams for as long as the job runs.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = time.Minute
	IdleTimeout       = 2 * time.Minute
)

// HTTPServer is an http.Server for h with the timeouts above, so that
// slow or idle clients cannot hold connections open.
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout,
		IdleTimeout: IdleTimeout, MaxHeaderBytes: 64 << 10,
	}
}

// Handler is the server's HTTP API, metrics (/metrics) and dashboard (/).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		mux.Handle(rt.method+" "+rt.path, s.wrap(rt))
	}
	mux.Handle("GET /metrics", s.metricsHandler())
	mux.Handle("GET /", dashboard())
	return mux
}

// wrap adds the size limit, authentication, the admin check and request
// logging to a route.
func (s *Server) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		begin := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: 200}
		r.Body = http.MaxBytesReader(sw, r.Body, MaxBody)
		who, ok := s.admit(sw, r, rt)
		if ok {
			rt.handle(sw, r, who)
		}
		s.metrics.requests.WithLabelValues(rt.method+" "+rt.path, fmt.Sprint(sw.code)).Inc()
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "tenant", who.Name, "status", sw.code, "took", time.Since(begin))
	})
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) { w.code = code; w.ResponseWriter.WriteHeader(code) }

// Flush lets log streaming through the wrapper flush.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// admit authenticates the request when the route needs it and checks the
// admin role; it answers the request itself when it refuses it.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, rt route) (store.Tenant, bool) {
	if !rt.auth {
		return store.Tenant{}, true
	}
	who, err := s.authenticate(r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="corral"`)
		writeError(w, http.StatusUnauthorized, err.Error())
		return who, false
	}
	if rt.admin && !who.Admin {
		writeError(w, http.StatusForbidden, "this needs an admin token")
		return who, false
	}
	return who, true
}

func (s *Server) authenticate(r *http.Request) (store.Tenant, error) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return store.Tenant{}, errors.New("missing bearer token: send Authorization: Bearer <token>")
	}
	t, err := s.st.Authenticate(token, s.now())
	if err != nil {
		return store.Tenant{}, errors.New("unknown token")
	}
	return t, nil
}

// decode reads a JSON body strictly: one object, no unknown fields, no
// trailing data, at most MaxBody bytes.
func decode(r *http.Request, v any) (int, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return http.StatusUnsupportedMediaType, fmt.Errorf("content type %q: send application/json", ct)
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return http.StatusRequestEntityTooLarge, fmt.Errorf("request body over %d bytes", MaxBody)
		}
		if errors.Is(err, io.EOF) {
			return http.StatusBadRequest, errors.New("empty request body: send a JSON object")
		}
		return http.StatusBadRequest, fmt.Errorf("invalid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return http.StatusBadRequest, errors.New("invalid JSON: data after the object")
	}
	return 0, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, api.Error{Error: msg})
}

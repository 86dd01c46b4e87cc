package server

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

//go:embed web
var webFiles embed.FS

// dashboard serves the embedded web dashboard.
func dashboard() http.Handler {
	sub, err := fs.Sub(webFiles, "web")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	return http.FileServerFS(sub)
}

func (s *Server) metricsHandler() http.Handler {
	h := promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.refreshMetrics()
		h.ServeHTTP(w, r)
	})
}

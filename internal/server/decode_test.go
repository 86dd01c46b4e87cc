package server

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/corral-sched/corral/internal/server/api"
)

// FuzzDecodeJobRequest feeds arbitrary bodies to the API's request
// decoding and validation: no panic, and an accepted request is one
// object without unknown fields whose validation holds.
func FuzzDecodeJobRequest(f *testing.F) {
	for _, seed := range []string{
		`{"command":["true"]}`,
		`{"command":["sh","-c","echo hi"],"gpus":2,"tasks":4,"time":"1h","priority":3}`,
		`{"command":["x"],"share":0.25,"env":["A=1"]}`,
		`{"command":["x"],"mig":"1g.10gb"}`,
		`{"command":["true"],"gpu":1}`,
		`{"command":["true"]}{}`,
		`{"command":"true"}`,
		`{"name":"../../etc","command":["true"]}`,
		`{"gpus":-1,"command":["x"]}`,
		`{"command":["x"],"time":"-5s"}`,
		`[`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/v1/jobs", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		var r api.JobRequest
		code, err := decode(req, &r)
		if err != nil {
			if code < 400 || code >= 500 {
				t.Fatalf("decode error %v with status %d, want 4xx", err, code)
			}
			return
		}
		d, err := r.Validate()
		if err != nil {
			return
		}
		if len(r.Command) == 0 || r.GPUs < 0 || d.Time < 0 || d.Grace < 0 || (r.Name != "" && !api.ValidName(r.Name)) {
			t.Fatalf("validation accepted %+v", r)
		}
	})
}

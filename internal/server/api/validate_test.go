package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestValidateTakesSlurmTimeLimits(t *testing.T) {
	for in, want := range map[string]time.Duration{"90": 90 * time.Minute, "1-12": 36 * time.Hour, "2:00:00": 2 * time.Hour, "1d": 24 * time.Hour, "45m": 45 * time.Minute} {
		r := JobRequest{Command: []string{"x"}, Time: in}
		d, err := r.Validate()
		if err != nil || d.Time != want {
			t.Errorf("time %q: %v, %v; want %v", in, d.Time, err, want)
		}
	}
	r := JobRequest{Command: []string{"x"}, Time: "1:2:3:4"}
	if _, err := r.Validate(); err == nil || !strings.Contains(err.Error(), `time "1:2:3:4"`) || !strings.Contains(err.Error(), "D-H:M:S") {
		t.Errorf("time 1:2:3:4: %v; want an error naming the field and the forms", err)
	}
}

func TestCheckSetFields(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"command":["x"]}`, ""},
		{`{"command":["x"],"gpus":0,"cpu":0,"memory_mib":0,"priority":0,"time":""}`, ""},
		{`{"command":["x"],"share":0.5,"tasks":2,"name":"a"}`, ""},
		{`{"command":["x"],"share":0}`, "share 0: want a fraction"},
		{`{"command":["x"],"tasks":0}`, "tasks 0: want 1..64"},
		{`{"command":["x"],"name":""}`, `name "": empty`},
		{`{"command":["x"],"queue":"","mig":"","image":"","workdir":""}`, `image "": empty`},
	} {
		var fields map[string]any
		if err := json.Unmarshal([]byte(tc.body), &fields); err != nil {
			t.Fatal(err)
		}
		err := CheckSetFields(fields)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", tc.body, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.body, err, tc.want)
		}
	}
}

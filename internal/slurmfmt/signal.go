package slurmfmt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Signal is sbatch's --signal: Name (SIGUSR1) sent Before the time
// limit, to the batch shell alone when MainOnly (B:), else to every
// process of the job.
type Signal struct {
	Name     string
	Before   time.Duration
	MainOnly bool
}

// SignalForms lists what ParseSignal takes.
const SignalForms = "[B:]SIG[@SECONDS], such as USR1@120 or B:TERM@60"

// signals are the signals a job may ask for, by their Linux numbers.
var signals = map[string]int{"HUP": 1, "INT": 2, "QUIT": 3, "USR1": 10, "USR2": 12, "ALRM": 14, "TERM": 15, "CONT": 18, "URG": 23, "XCPU": 24, "WINCH": 28}

// ParseSignal reads sbatch's --signal value: a signal by name (USR1,
// SIGUSR1) or number, then @SECONDS before the time limit (60 when
// not given, at most 65535), with B: to signal only the batch shell.
func ParseSignal(s string) (Signal, error) {
	sig := Signal{Before: 60 * time.Second}
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "B:"); ok {
		s, sig.MainOnly = rest, true
	} else if strings.HasPrefix(s, "R:") || strings.HasPrefix(s, "RB:") || strings.HasPrefix(s, "BR:") {
		return sig, errors.New("R: (no reservation) has no meaning here; want " + SignalForms)
	}
	name, at, hasAt := strings.Cut(s, "@")
	if hasAt {
		n, err := strconv.Atoi(at)
		if err != nil || n < 0 || n > 65535 {
			return sig, fmt.Errorf("@%s: want seconds 0..65535; %s", at, SignalForms)
		}
		sig.Before = time.Duration(n) * time.Second
	}
	up := strings.TrimPrefix(strings.ToUpper(name), "SIG")
	if n, err := strconv.Atoi(name); err == nil {
		for k, v := range signals {
			if v == n {
				up = k
			}
		}
	}
	if _, ok := signals[up]; !ok {
		return sig, fmt.Errorf("signal %q: want one of HUP, INT, QUIT, USR1, USR2, ALRM, TERM, CONT, URG, XCPU, WINCH; %s", name, SignalForms)
	}
	sig.Name = "SIG" + up
	return sig, nil
}

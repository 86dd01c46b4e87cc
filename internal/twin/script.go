package twin

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Step is one line of a script: a command and its key=value arguments,
// the first bare word as Name.
type Step struct {
	Line int
	Cmd  string
	Name string
	Args map[string]string
}

// Int is argument key as a number, def when absent.
func (s Step) Int(key string, def int) int {
	v, ok := s.Args[key]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		panic(fmt.Sprintf("line %d: %s=%q is not a number", s.Line, key, v)) // scripts are the tests' own
	}
	return n
}

// Script is the steps and the transcript they should give.
type Script struct {
	Steps []Step
	Want  []string
}

// Parse reads a script: steps, "----", the expected transcript. Blank
// lines and lines starting with # are skipped.
func Parse(r io.Reader) (*Script, error) {
	sc := bufio.NewScanner(r)
	s := &Script{}
	inWant := false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case line == "----":
			inWant = true
		case inWant:
			s.Want = append(s.Want, line)
		default:
			st, err := parseStep(n, line)
			if err != nil {
				return nil, err
			}
			s.Steps = append(s.Steps, st)
		}
	}
	return s, sc.Err()
}

func parseStep(n int, line string) (Step, error) {
	f := strings.Fields(line)
	st := Step{Line: n, Cmd: f[0], Args: map[string]string{}}
	for _, w := range f[1:] {
		k, v, ok := strings.Cut(w, "=")
		switch {
		case ok:
			st.Args[k] = v
		case st.Name == "":
			st.Name = w
		default:
			return st, fmt.Errorf("line %d: %q: want key=value", n, w)
		}
	}
	switch st.Cmd {
	case "fleet", "settle", "down", "up", "restart":
	case "tenant", "submit", "finish":
		if st.Name == "" {
			return st, fmt.Errorf("line %d: %s needs a name", n, st.Cmd)
		}
	default:
		return st, fmt.Errorf("line %d: unknown step %q (fleet, tenant, submit, finish, down, up, restart, settle)", n, st.Cmd)
	}
	return st, nil
}

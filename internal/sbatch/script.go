package sbatch

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Directive is one option of an #SBATCH line, as written: Name is
// "--gres" or "-G"; Value is what follows ("gpu:2"), "" when none.
type Directive struct {
	Line     int
	Name     string
	Value    string
	HasValue bool   // the value came with the option ("--x=v", "-Jv") or after it
	Text     string // the directive as written ("#SBATCH -t 90"), for messages
}

// Script is a batch script's directives, in order.
type Script struct {
	Name       string // the file's name, for messages
	Directives []Directive
	// Command is the line number of the first command line, where sbatch
	// stops reading directives (0: the script has none).
	Command int
	// Late lists the #SBATCH lines after the first command, which
	// sbatch ignores: corral says so.
	Late []int
}

// ErrNotScript is Parse's error for a file that does not start with
// "#!", as sbatch refuses it.
var ErrNotScript = errors.New("not a batch script: its first line must start with #! and the path of an interpreter (#!/bin/bash)")

// Parse reads the #SBATCH lines of a script: from its second line until
// the first line that is neither blank nor a comment. Each line may
// hold several options; a word starting with '#' ends it; words may be
// quoted with ' or ". Which words are values is decided by the option
// table: Parse keeps the words, Interpret pairs them.
func Parse(name string, src []byte) (*Script, error) {
	if !bytes.HasPrefix(src, []byte("#!")) {
		return nil, fmt.Errorf("%s: %w", name, ErrNotScript)
	}
	s := &Script{Name: name}
	for i, raw := range strings.Split(string(src), "\n") {
		n := i + 1
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		rest, isDirective := cutDirective(line)
		switch {
		case n == 1 || line == "":
			continue
		case isDirective && s.Command == 0:
			words, err := split(rest)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %w", name, n, line, err)
			}
			ds, err := pair(words, n, line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			s.Directives = append(s.Directives, ds...)
		case isDirective:
			s.Late = append(s.Late, n)
		case strings.HasPrefix(line, "#"):
			continue
		case s.Command == 0:
			s.Command = n
		}
	}
	return s, nil
}

// cutDirective returns what follows "#SBATCH" on a directive line.
func cutDirective(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "#SBATCH")
	if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return "", false
	}
	return rest, true
}

// split cuts a directive's text into words as a shell would, without
// expansions: quotes group, a word starting with '#' ends the line.
func split(text string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range text {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			return words, nil
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// pair turns the words of one line into directives, taking the next
// word as the value of an option that needs one.
func pair(words []string, line int, text string) ([]Directive, error) {
	var out []Directive
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") || w == "-" || w == "--" {
			return nil, fmt.Errorf("%s: %q is not an option", text, w)
		}
		d := Directive{Line: line, Name: w, Text: "#SBATCH " + w}
		if name, value, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "--") {
			d.Name, d.Value, d.HasValue = name, value, true
		} else if !strings.HasPrefix(w, "--") && len(w) > 2 {
			d.Name, d.Value, d.HasValue = w[:2], w[2:], true
		}
		opt, known := lookup(d.Name)
		if known && opt.arg == required && !d.HasValue {
			if i+1 >= len(words) {
				return nil, fmt.Errorf("%s: %s needs a value", text, d.Name)
			}
			i++
			d.Value, d.HasValue = words[i], true
			d.Text += " " + words[i]
		}
		out = append(out, d)
	}
	return out, nil
}

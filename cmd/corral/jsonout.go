package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// runJSONToStdout runs c when args give "--json -", or --json with no
// file (last, or before another flag), to a command whose --json takes
// a file: the document goes to stdout alone, and what the command prints
// goes to stderr. ok is false when args ask no such thing.
func runJSONToStdout(c command, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	i, form := jsonDash(args)
	if i < 0 || !jsonTakesFile(c, args) {
		return 0, false
	}
	dir, err := os.MkdirTemp("", "corral-json-")
	if err != nil {
		fmt.Fprintf(stderr, "corral %s: --json -: %v\n", c.name, err)
		return 1, true
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "stdout.json")
	args = slices.Clone(args)
	switch form {
	case jsonInline:
		args[i] = strings.TrimSuffix(args[i], "-") + path
	case jsonDashed:
		args[i+1] = path
	case jsonBare:
		args = slices.Insert(args, i+1, path)
	}
	if code = exitCode(c.name, c.run(args, stderr, stderr), stderr); code != 0 {
		return code, true
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "corral %s: --json -: the command wrote no JSON: %v\n", c.name, err)
		return 1, true
	}
	defer f.Close()
	if _, err := io.Copy(stdout, f); err != nil {
		fmt.Fprintf(stderr, "corral %s: --json -: %v\n", c.name, err)
		return 1, true
	}
	return 0, true
}

// How a --json that means stdout is written: "--json -", "--json=-", or
// "--json" with no file after it.
const (
	jsonDashed = iota
	jsonInline
	jsonBare
)

// jsonDash is the index of a --json (or -json) that means stdout in args
// before any "--", and how it is written; -1 when there is none.
func jsonDash(args []string) (int, int) {
	for i, a := range args {
		last := i+1 == len(args)
		switch {
		case a == "--":
			return -1, 0
		case (a == "--json" || a == "-json") && !last && args[i+1] == "-":
			return i, jsonDashed
		case a == "--json=-" || a == "-json=-":
			return i, jsonInline
		case (a == "--json" || a == "-json") && (last || strings.HasPrefix(args[i+1], "-")):
			return i, jsonBare
		}
	}
	return -1, 0
}

// jsonTakesFile says whether the --json of c (or of the command under it
// args name, as bench fgd) takes a value.
func jsonTakesFile(c command, args []string) bool {
	sub, _ := splitSub(c, args)
	fl, err := commandFlags(c, sub...)
	if err != nil {
		return false
	}
	for _, f := range fl {
		if f.Name == "json" {
			return !isBool(f)
		}
	}
	return false
}

// runYAML runs c when args give --yaml to a command that has --json: the
// document --json prints to stdout (a switch) or writes (a file, which
// is then stdout) comes out as YAML, in the same order. ok is false when
// args ask no such thing.
func runYAML(c command, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	rest, takesFile, ok := withoutYAML(c, args)
	if !ok {
		return 0, false
	}
	var doc bytes.Buffer
	if takesFile {
		code, _ = runJSONToStdout(c, withFlag(c, rest, "--json", "-"), &doc, stderr)
	} else {
		code = exitCode(c.name, c.run(withFlag(c, rest, "--json"), &doc, stderr), stderr)
	}
	if code != 0 {
		return code, true
	}
	out, err := jsonToYAML(doc.Bytes())
	if err != nil {
		fmt.Fprintf(stderr, "corral %s: --yaml: %v\n", c.name, err)
		return 1, true
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "corral %s: --yaml: %v\n", c.name, err)
		return 1, true
	}
	return 0, true
}

// withoutYAML returns args without their --yaml, the flags first (as
// the command's parser orders them), and whether the command's --json
// takes a file; ok is false when --yaml is not among the flags args
// give c (or the command under it that args name). The command's own
// flag set says which arguments are flags: a job's arguments after
// corral submit's command are the job's.
func withoutYAML(c command, args []string) (rest []string, takesFile, ok bool) {
	if !slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "yaml") }) {
		return nil, false, false // most command lines: no probe
	}
	sub, args := splitSub(c, args)
	p := &flagProbe{}
	c.run(append(slices.Clone(sub), "-h"), p, p)
	if len(p.sets) != 1 || p.sets[0].Lookup("yaml") == nil {
		return nil, false, false
	}
	fs := p.sets[0]
	norm := normalize(fs, args, p.interspersed[0])
	for i := 0; i < len(norm) && norm[i] != "--"; i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(norm[i], "-"), "=")
		f := fs.Lookup(name)
		switch {
		case f == nil:
			continue
		case f.Name == "yaml" && (!hasValue || value == "true"):
			rest = append(append(slices.Clone(sub), norm[:i]...), norm[i+1:]...)
			return rest, !isBool(fs.Lookup("json")), true
		case !isBool(f) && !hasValue:
			i++ // its value
		}
	}
	return nil, false, false
}

// withFlag puts flag (and its value) first among args, after the name of
// a command under c.
func withFlag(c command, args []string, flag ...string) []string {
	sub, args := splitSub(c, args)
	return append(append(slices.Clone(sub), flag...), args...)
}

// jsonToYAML rewrites one JSON document as YAML, keeping the order of
// its keys; numbers and strings keep their text.
func jsonToYAML(doc []byte) ([]byte, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(doc, &n); err != nil {
		return nil, fmt.Errorf("the JSON document does not read: %w", err)
	}
	if n.Kind == 0 {
		return nil, errors.New("the command printed no JSON document")
	}
	blockStyle(&n)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// blockStyle drops the flow and quoting styles JSON gave n and its
// children, so that YAML writes them as blocks and quotes only strings
// that need it.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// writeYAML writes v as YAML, through its JSON form (its json tags name
// the keys).
func writeYAML(w io.Writer, v any) error {
	doc, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out, err := jsonToYAML(doc)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// splitSub splits off the name of the command under c that args start
// with (bench's fgd), if any.
func splitSub(c command, args []string) (sub, rest []string) {
	if len(args) > 0 && slices.Contains(c.subs, args[0]) {
		return args[:1], args[1:]
	}
	return nil, args
}

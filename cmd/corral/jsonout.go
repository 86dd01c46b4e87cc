package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// runJSONToStdout runs c when args give "--json -" to a command whose
// --json takes a file: the document goes to stdout alone, and what the
// command prints goes to stderr. ok is false when args ask no such thing.
func runJSONToStdout(c command, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	i, inline := jsonDash(args)
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
	if inline {
		args[i] = strings.TrimSuffix(args[i], "-") + path
	} else {
		args[i+1] = path
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

// jsonDash is the index of "--json -" ("-json -") or "--json=-" in args
// before any "--", and whether the value is inline; -1 when there is none.
func jsonDash(args []string) (int, bool) {
	for i, a := range args {
		switch {
		case a == "--":
			return -1, false
		case (a == "--json" || a == "-json") && i+1 < len(args) && args[i+1] == "-":
			return i, false
		case a == "--json=-" || a == "-json=-":
			return i, true
		}
	}
	return -1, false
}

// jsonTakesFile says whether the --json of c (or of the command under it
// args name, as bench fgd) takes a value.
func jsonTakesFile(c command, args []string) bool {
	var sub []string
	if len(args) > 0 && slices.Contains(c.subs, args[0]) {
		sub = args[:1]
	}
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

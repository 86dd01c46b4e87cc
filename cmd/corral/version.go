package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/corral-sched/corral/internal/buildinfo"
)

const versionUsage = `Usage: corral version [--json | --yaml | -o text|json|yaml]

Prints the version (a release tag or the module version Go stamped),
the commit, whether the tree it was built from was modified, and the Go
version and platform. corral --version is the same.

Flags:
`

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("o", "text", "output `format`: text, json or yaml")
	alias(fs, "o", "output")
	asJSON := fs.Bool("json", false, "print JSON (-o json)")
	if err := parseFlags(fs, versionUsage, args); err != nil {
		return err
	}
	if *asJSON {
		*format = "json"
	}
	if fs.NArg() > 0 {
		return unexpected(fs)
	}
	info := buildinfo.Get()
	switch *format {
	case "text":
		_, err := fmt.Fprintln(stdout, info)
		return err
	case "json":
		return json.NewEncoder(stdout).Encode(info)
	case "yaml":
		return writeYAML(stdout, info)
	}
	return usageErrorf("-o %q: want text, json or yaml", *format)
}

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/corral-sched/corral/internal/buildinfo"
)

const versionUsage = `Usage: corral version [-o text|json]

Prints the version (a release tag or the module version Go stamped),
the commit, whether the tree it was built from was modified, and the Go
version and platform. corral --version is the same.

Flags:
`

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("o", "text", "output `format`: text or json")
	alias(fs, "o", "output")
	if err := parseFlags(fs, versionUsage, args); err != nil {
		return err
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
	}
	return usageErrorf("-o %q: want text or json", *format)
}

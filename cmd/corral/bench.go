package main

import (
	"fmt"
	"io"
	"strings"
)

func runBench(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stdout, "Usage: corral bench <benchmark> [flags]")
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, "Benchmarks:")
		fmt.Fprintln(stdout, "  fgd   fill a cluster one pod at a time with each policy; compare unallocated GPUs")
		fmt.Fprintln(stdout, "        (the protocol of the ATC'23 FGD paper, on openb traces or the built-in example)")
		fmt.Fprintln(stdout, "  scale decisions/s and latency of pod and gang placement on a large synthetic fleet")
		return nil
	}
	switch args[0] {
	case "fgd":
		return runBenchFGD(args[1:], stdout, stderr)
	case "scale":
		return runBenchScale(args[1:], stdout, stderr)
	}
	if strings.HasPrefix(args[0], "-") {
		return usageErrorf("flag provided but not defined: -%s", strings.TrimLeft(args[0], "-"))
	}
	return usageErrorf("unknown benchmark %q (known: fgd, scale)", args[0])
}

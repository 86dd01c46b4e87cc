package main

import (
	"errors"
	"io"
)

const logsUsage = `Usage: corral logs [flags] JOB

Prints a job's output (rank 0's standard output unless told otherwise).
With -f it keeps printing as the job writes, until the job ends; with
--tail N it prints only the last N lines as they are now.
` + clientHelp + `
Flags:
`

func runLogs(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("logs", stderr)
	follow := fs.Bool("f", false, "follow: keep printing until the job ends")
	rank := fs.Int("rank", 0, "which task of a gang")
	errStream := fs.Bool("stderr", false, "print standard error instead of standard output")
	tail := fs.Int("tail", 0, "print only the last `N` lines (0: all)")
	if err := parseFlags(fs, logsUsage, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() != 1:
		return errors.New("give one job ID")
	case *tail < 0:
		return errors.New("--tail: give a number of lines, 1 or more (0: all)")
	case *tail > 0 && *follow:
		return errors.New("give --tail or -f, not both")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	stream := "stdout"
	if *errStream {
		stream = "stderr"
	}
	ctx, cancel := requestContext(0)
	defer cancel()
	if *tail > 0 {
		return c.LogsTail(ctx, fs.Arg(0), *rank, stream, *tail, stdout)
	}
	return c.Logs(ctx, fs.Arg(0), *rank, stream, *follow, stdout)
}

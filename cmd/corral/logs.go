package main

import (
	"errors"
	"io"
)

const logsUsage = `Usage: corral logs [flags] JOB

Prints a job's output (rank 0's standard output unless told otherwise).
With -f it keeps printing as the job writes, until the job ends.
` + clientHelp + `
Flags:
`

func runLogs(args []string, stdout, stderr io.Writer) error {
	fs, cf := clientFlagSet("logs", stderr)
	follow := fs.Bool("f", false, "follow: keep printing until the job ends")
	rank := fs.Int("rank", 0, "which task of a gang")
	errStream := fs.Bool("stderr", false, "print standard error instead of standard output")
	if err := parseFlags(fs, logsUsage, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("give one job ID")
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
	return c.Logs(ctx, fs.Arg(0), *rank, stream, *follow, stdout)
}
